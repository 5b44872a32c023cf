#!/bin/sh
# Usage: run.sh DIR JAVA-ARGS... — runs `java JAVA-ARGS...` with the JDK that built DIR (build.sh).
dir=$1
shift
home=$(cat "$dir/build/java-home") || { echo "run.sh: $dir is not built (run build.sh)" >&2; exit 1; }
exec "$home/bin/java" "$@"
