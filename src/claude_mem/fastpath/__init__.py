"""What every short-lived process needs at a fraction of its usual start-up cost (DESIGN §11).

A hook runs for ~20 ms, and importing `json` or `re` costs it 6–8 ms each (they pull `enum`,
`functools`, `collections`): `jsontext` reads and writes JSON through the C codec `json` itself
uses, and `patterns` keeps regular expressions compiled once per machine instead of once per
process. Both give exactly what `json` and `re.compile` give, and fall back to them. Stdlib only,
below every other part.
"""
