"""One-line build messages ("Compiling x.cpp"), full command lines with verbose=1.

In the style of PlatformIO's builder: every *COMSTR gets a short message unless the
user asked for the commands themselves."""

MESSAGES = {
    "CCCOMSTR": "Compiling $SOURCE",
    "CXXCOMSTR": "Compiling $SOURCE",
    "SHCCCOMSTR": "Compiling $SOURCE",
    "SHCXXCOMSTR": "Compiling $SOURCE",
    "ASCOMSTR": "Assembling $SOURCE",
    "ASPPCOMSTR": "Assembling $SOURCE",
    "ARCOMSTR": "Archiving $TARGET",
    "RANLIBCOMSTR": "Indexing $TARGET",
    "LINKCOMSTR": "Linking $TARGET",
    "TEXTFILECOMSTR": "Writing $TARGET",
    "SUBSTFILECOMSTR": "Writing $TARGET",
    "GENCOMSTR": "Generating $TARGETS",
    "INSTALLSTR": "Installing $TARGET",
}


def generate(env):
    if env.get("verbose"):
        return
    for name, message in MESSAGES.items():
        env[name] = message


def exists(env):
    return True
