#!/usr/bin/python3
"""Generates the ONNX backend test data (node + simple cases) from Debian's python3-onnx 1.12.

Usage: /usr/bin/python3 generate.py OUT_DIR

onnx 1.12's generators use numpy aliases (np.float, np.int, ...) that numpy 1.24 removed; they are
restored here before importing the generators. StringNormalizer cases need an en_US.UTF-8 locale.
"""
import argparse
import sys
import warnings

import numpy as np

warnings.simplefilter("ignore")
for alias, typ in (("float", float), ("int", int), ("bool", bool), ("object", object),
                   ("complex", complex), ("str", str)):
    if alias not in np.__dict__:
        setattr(np, alias, typ)

from onnx.backend.test.cmd_tools import generate_data  # noqa: E402

generate_data(argparse.Namespace(output=sys.argv[1], op_type=None))
