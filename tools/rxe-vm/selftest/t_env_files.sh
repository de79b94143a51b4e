#!/bin/sh
# --env values (quoting intact), --file files and directories, payload paths.
set -e
[ "$SELFTEST_VALUE" = "a b'c \$d" ] || { echo "SELFTEST_VALUE='$SELFTEST_VALUE'"; exit 1; }
[ "$TEST_NAME" = t_env_files.sh ]
[ "$PWD" = /payload ]
[ "$(cat /payload/data/one.txt)" = one ]
[ "$(cat /payload/data/tree/sub/two.txt)" = two ]
[ "$(cat /opt/selftest/abs.txt)" = absolute ]
echo "env and files ok"
