"""The privacy corpora and where a session puts text (issue 24).

- `secrets.SECRETS`: fake credentials in realistic formats, grouped by family, none of them in the
  tests' own corpus (`tests/secret_corpus.py`), each with the part that must disappear.
- `lookalikes.LOOKALIKES`: realistic text that holds no secret and must be kept verbatim.
- `placements.PLACEMENTS`: the places a Claude Code session puts text, as hook payloads.

Every value is made up and assembled at run time from pieces, so the repository never trips a
secret scanner.
"""
