"""What a linked firmware becomes: Verilog hex, Intel HEX and binary images (elfout,
output_formats), the size report against the board's memory (memory_usage), and where the
bytes go, by library, object and symbol (ldmap, lto_objects, footprint, footprint_report).
"""

# The section an embedded model goes into (the model_embed tool's $MODEL_SECTION by
# default), by which the footprint knows the model's bytes.
MODEL_SECTION = ".rodata.model"
