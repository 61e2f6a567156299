"""`taxi-rsp query`: evaluate a query without STREAM patterns once over static data.

    $ taxi-rsp query q.rq --static data.ttl            # SPARQL 1.1 JSON results on stdout
    $ taxi-rsp query q.rq --static data.ttl --format nt  # CONSTRUCT as N-Triples

The same engine, parser and plans as ``taxi-rsp run``; a query over static data has no
evaluation instants, so its one result is printed (see taxi_rsp.planner.oneshot).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from taxi_rsp.errors import UserError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "query",
        help="evaluate a SPARQL/CQELS-QL query once over static RDF data",
        description="One-shot evaluation of a query without STREAM patterns over --static files: "
        "SELECT/ASK print SPARQL 1.1 Query Results JSON, CONSTRUCT prints N-Triples.",
    )
    parser.add_argument("query", type=Path, metavar="QUERY", help="query file")
    parser.add_argument("--static", action="append", type=Path, default=[], metavar="FILE",
                        help="RDF file for the default graph (repeatable; format from the suffix)")
    parser.add_argument("--named", action="append", type=Path, default=[], metavar="FILE",
                        help="RDF file loaded as a named graph, named by the file's IRI (repeatable)")
    parser.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", help="bind ${NAME}")
    parser.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from taxi_rsp.listener.sparql_json import binding_json
    from taxi_rsp.engine.engine import Engine
    from taxi_rsp.planner.oneshot import evaluate_once
    from taxi_rsp.rdf.terms import IRI

    try:
        text = args.query.read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot read {args.query}: {exc.strerror or exc}") from None
    params = {}
    for item in args.param:
        name, sep, value = item.partition("=")
        if not sep:
            raise UserError(f"--param {item!r}: use NAME=VALUE")
        params[name] = value
    engine = Engine()
    for path in args.static:
        engine.load_static(path)
    for path in args.named:
        engine.static.load(path, IRI(path.resolve().as_uri()))
    result = evaluate_once(engine, text, params=params, source=str(args.query))
    for warning in result.warnings:
        print(f"taxi-rsp query: warning: {warning}", file=sys.stderr)
    if result.form == "CONSTRUCT":
        for triple in result.triples:
            print(" ".join(t.n3() for t in triple) + " .")
    elif result.form == "ASK":
        json.dump({"head": {}, "boolean": result.boolean}, sys.stdout)
        print()
    else:
        bindings = [{c: binding_json(v) for c, v in zip(result.columns, row) if v is not None} for row in result.rows]
        json.dump({"head": {"vars": list(result.columns)}, "results": {"bindings": bindings}}, sys.stdout,
                  ensure_ascii=False)
        print()
    return 0
