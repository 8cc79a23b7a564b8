#!/bin/sh
# sql2c.sh NAME < file.sql > file.c: the SQL text as a C string constant
# "const char NAME[]", so pgmirror never reads its schema at run time.
set -eu
name=$1
printf '/* generated from sql/schema.sql by scripts/sql2c.sh; do not edit */\n'
printf 'extern const char %s[];\n' "$name"
printf 'const char %s[] =\n' "$name"
sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/\t"/' -e 's/$/\\n"/'
printf '\t"";\n'
