"""Building and probing the cross compilers and their C++ library: CORE-V GCC from Debian's
sources (corev_gcc), libstdc++ for Debian's picolibc toolchain (libstdcxx), the steps both
record (buildsteps), and what a compiler is, asked once (compiler_facts).
"""
