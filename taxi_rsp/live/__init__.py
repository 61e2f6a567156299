"""The answers on a map in a browser: `taxi-rsp run … --live` while the engine runs, and
`taxi-rsp view OUT_DIR` over a finished run. A small threaded standard-library HTTP
server pushes the current state with Server-Sent Events to a static page shipped in the
package (``static/``: no CDN, no network)."""
