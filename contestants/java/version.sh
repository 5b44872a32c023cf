#!/bin/sh
# Usage: version.sh DIR [netty] — one line: the JDK that DIR runs on (and the pinned Netty version).
dir=$1
root=$(cd "$(dirname "$0")" && pwd)
home=$(cat "$dir/build/java-home" 2>/dev/null || "$root/find-jdk.sh") || exit 1
field() { sed -n "s/^$1=\"\(.*\)\"\$/\1/p" "$home/release"; }
line="java $(field JAVA_VERSION) ($(field IMPLEMENTOR) $(field JAVA_RUNTIME_VERSION))"
if [ "$2" = netty ]; then
    line="$line, netty $(sed -n 's:.*<netty.version>\(.*\)</netty.version>.*:\1:p' "$root/pom.xml")"
fi
echo "$line"
