#!/usr/bin/env python3
"""Validates every model in a directory against the JSON Schema of the model
format with an independent validator (python-jsonschema; TOML read by tomllib).
Usage: validate-models.py SCHEMA.json MODELS_DIR"""
import json, sys, tomllib, glob, jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
v = jsonschema.Draft202012Validator(schema)
bad = 0
for f in sorted(glob.glob(sys.argv[2] + "/*.toml")):
    with open(f, "rb") as fh:
        model = tomllib.load(fh)
    for e in v.iter_errors(model):
        bad += 1
        print(f"{f}: {'/'.join(map(str, e.absolute_path))}: {e.message}")
print(f"checked {len(glob.glob(sys.argv[2] + '/*.toml'))} models, {bad} problems")
sys.exit(1 if bad else 0)
