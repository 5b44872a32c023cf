#!/bin/sh
# Prints the home of the JDK the Java contestants are built and run with: major version JDK_MAJOR
# exactly (25: ForkJoinPool.schedule, the JDK's lock-free timer, appeared in it), looked for in
# $JAVA_HOME, then under /usr/lib/jvm in name order. Versions come from each JDK's `release` file,
# so no JVM starts. Fails, naming what to install, when there is none.
JDK_MAJOR=25
for home in ${JAVA_HOME:+"$JAVA_HOME"} /usr/lib/jvm/*; do
    [ -x "$home/bin/javac" ] && [ -f "$home/release" ] || continue
    version=$(sed -n 's/^JAVA_VERSION="\(.*\)"$/\1/p' "$home/release")
    if [ "${version%%[.+-]*}" = "$JDK_MAJOR" ]; then
        cd "$home" && pwd -P
        exit 0
    fi
done
echo "find-jdk.sh: no JDK $JDK_MAJOR under /usr/lib/jvm or in \$JAVA_HOME; install one there" \
    "(e.g. Temurin $JDK_MAJOR) or point JAVA_HOME at one" >&2
exit 1
