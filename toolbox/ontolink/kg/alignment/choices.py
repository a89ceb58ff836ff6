"""What an alignment model may be, as names: cheap to import (no torch), so options and manifests check them
without loading the model's code."""

DIRECTIONS = ("text2kg", "kg2text", "both")
HEADS = ("linear", "mlp", "cross-attention")  # heads.py
COMBINES = ("concat", "gate")  # how a hybrid triple's verbalised and KG blocks are joined
