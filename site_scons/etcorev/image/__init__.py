"""What a linked firmware becomes: Verilog hex, Intel HEX and binary images (elfout,
output_formats), the size report against the board's memory (memory_usage), and where the
bytes go, by library, object and symbol (ldmap, lto_objects, footprint, footprint_report).
"""
