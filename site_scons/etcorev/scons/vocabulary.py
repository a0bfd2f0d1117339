"""Whose words a message speaks. The tools serve any SConstruct, so what they say names
construction variables: "$CMSIS_NN_ROOT=PATH", "the CMSIS-NN tree '...' ($CMSIS_NN_ROOT)".
Our own SConstruct speaks in its command-line options: it gives the tools
{"CMSIS_NN_ROOT": "cmsis_nn", ...} in $OPTION_WORDS (from the option table,
etcorev.scons.options.option_words()), and what reaches the user goes through spoken():
"cmsis_nn=PATH", "the CMSIS-NN tree '...' (cmsis_nn=)". Variables that are no option stay
as they are."""

import re


def spoken(words, text):
    """text with each $VARIABLE of words (a {variable: option} dict, an environment
    holding one in $OPTION_WORDS, or None) as option=: "$BOARD=qemu" and "$BOARD" both
    become "board=qemu" and "board="."""
    if words is not None and not isinstance(words, dict):
        words = words.get("OPTION_WORDS")
    if not words:
        return text

    def option(match):
        name = words.get(match.group(1))
        return name + "=" if name else match.group(0)
    return re.sub(r"\$([A-Z][A-Z0-9_]*)\b=?", option, str(text))
