#!/bin/sh
# Prints the home of the newest JDK with major version >= MIN (default 21) found under
# /usr/lib/jvm and in $JAVA_HOME. Versions come from each JDK's `release` file, so no JVM starts.
min=${1:-21}
best_major=0
best_home=
for home in ${JAVA_HOME:+"$JAVA_HOME"} /usr/lib/jvm/*; do
    [ -x "$home/bin/javac" ] && [ -f "$home/release" ] || continue
    version=$(sed -n 's/^JAVA_VERSION="\(.*\)"$/\1/p' "$home/release")
    major=${version%%[.+-]*}
    [ "$major" = 1 ] && major=$(echo "$version" | cut -d. -f2)   # 1.8 style
    case $major in '' | *[!0-9]*) continue ;; esac
    if [ "$major" -ge "$min" ] && [ "$major" -gt "$best_major" ]; then
        best_major=$major
        best_home=$(cd "$home" && pwd -P)
    fi
done
if [ -z "$best_home" ]; then
    echo "find-jdk.sh: no JDK with major version >= $min under /usr/lib/jvm or \$JAVA_HOME;" \
        "install a JDK $min or newer there (e.g. Temurin) or point JAVA_HOME at one" >&2
    exit 1
fi
echo "$best_home"
