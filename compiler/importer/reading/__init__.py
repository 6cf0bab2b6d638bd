"""The vocabulary the import from the modeling code reads module trees and writes specs with: module shapes
(modules.py), the spec's syntax tree (spec.py), options and transformers' paths (paths.py), and the parts that
several recognisers share (feed-forward matrices, head norms, dynamic masks, per-layer inputs). It imports
nothing else of the importer: the recognisers and the walk stand on it."""
