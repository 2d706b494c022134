# Writes OUT, a C file defining `const char SYMBOL[]` with the bytes of IN and a
# terminating NUL, so templates ship inside the library and cannot be swapped.
# Usage: cmake -DIN=file -DOUT=file.c -DSYMBOL=name -P embed.cmake
file(READ "${IN}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
file(WRITE "${OUT}" "/* Generated from ${IN} by cmake/embed.cmake. */\nconst char ${SYMBOL}[] = {\n${bytes}0x00};\n")
