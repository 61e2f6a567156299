#!/bin/sh
# PID 1 of the grading VM (kernel command line: init=/opt/grader/init.sh).
# No init system, no network: mount what a program needs, run the one submission
# described by /grade/job.json on the exchange disk, flush, power off. Every path
# ends in a power-off so the host never waits for its hard limit without cause.
export PATH=/opt/taxi-rsp/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export LANG=C.UTF-8

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mountpoint -q /dev || mount -t devtmpfs devtmpfs /dev
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /tmp
# No init system sets the host name; Java's getLocalHost() fails on "(none)".
echo grader > /proc/sys/kernel/hostname
# Loopback only: Spark and py4j talk to themselves over 127.0.0.1.
ip link set lo up 2>/dev/null

echo "taxi-rsp-grader: booted"
mkdir -p /grade
if mount -t ext4 -o nosuid,nodev /dev/vdb /grade; then
    /usr/bin/python3 /opt/grader/run_submission.py /grade
    sync
    umount /grade || sync
else
    echo "taxi-rsp-grader: cannot mount the exchange disk /dev/vdb"
fi
echo "taxi-rsp-grader: powering off"
poweroff -f
# poweroff -f should not return; if it does, the kernel panics on PID 1's exit and
# panic=1 with QEMU's -no-reboot ends the VM.
