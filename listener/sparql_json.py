"""SELECT results as SPARQL 1.1 Query Results JSON, one document per report (JSON Lines).

A continuous query reports many result sets, so the file holds one SPARQL 1.1 JSON
results document per line (``head.vars`` + ``results.bindings``, W3C "SPARQL 1.1
Query Results JSON Format" §3). Each document carries one extra member, ``instant``,
that places it on the stream: the instant's time, what triggered it (``event:<seq>``
or ``expiry``) and the change - ``=`` the whole ordered result (ORDER BY queries),
``+`` rows inserted, ``-`` rows deleted (the Istream/Dstream pair of other queries).
Readers of the standard format ignore the extra member.

>>> from taxi_rsp.rdf.terms import IRI, Literal
>>> binding_json(Literal("4", "http://www.w3.org/2001/XMLSchema#integer"))
{'type': 'literal', 'value': '4', 'datatype': 'http://www.w3.org/2001/XMLSchema#integer'}
>>> binding_json(IRI("http://x/a"))
{'type': 'uri', 'value': 'http://x/a'}
"""

from __future__ import annotations

import json
from typing import TextIO

from taxi_rsp.listener.generic import Counts, RenderedTerms
from taxi_rsp.engine.query import QueryOutput
from taxi_rsp.rdf.namespaces import XSD_STRING
from taxi_rsp.rdf.terms import IRI, BNode, DateTime, Literal, Term


def binding_json(term: Term) -> dict[str, str]:
    """One RDF term as a SPARQL JSON binding value (§3.2.2)."""
    if isinstance(term, IRI):
        return {"type": "uri", "value": term.value}
    if isinstance(term, BNode):
        return {"type": "bnode", "value": term.label}
    if isinstance(term, Literal):
        if term.lang:
            return {"type": "literal", "value": term.lexical, "xml:lang": term.lang}
        if term.datatype == XSD_STRING:
            return {"type": "literal", "value": term.lexical}
        return {"type": "literal", "value": term.lexical, "datatype": term.datatype}
    raise TypeError(f"not an RDF term: {term!r}")


class SparqlJsonResultWriter(Counts):
    """Listener writing one SPARQL 1.1 JSON results document per report and change."""

    def __init__(self, out: TextIO, columns: tuple[str, ...], ordered: bool) -> None:
        super().__init__()
        self.out = out
        self.columns = columns
        self.ordered = ordered
        self._bindings = RenderedTerms(binding_json, None)

    def _document(self, output: QueryOutput, change: str, rows: list[tuple]) -> str:
        render, dictionary = self._bindings.row, output.dictionary
        bindings = [
            {var: binding for var, binding in zip(self.columns, render(dictionary, row)) if binding is not None}
            for row in rows
        ]
        trigger = output.trigger
        instant = {"time": DateTime(trigger.time).isoformat(),
                   "trigger": "expiry" if trigger.is_expiry else f"event:{trigger.event.seq}",
                   "change": change}
        document = {"head": {"vars": list(self.columns)}, "results": {"bindings": bindings}, "instant": instant}
        return json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n"

    def __call__(self, output: QueryOutput) -> None:
        if self.ordered:
            self.out.write(self._document(output, "=", output.rows))
            self.emitted += 1
        else:
            for change, rows in (("+", output.rows), ("-", output.deleted)):
                if rows:
                    self.out.write(self._document(output, change, rows))
                    self.emitted += 1
        self._reported(output)
