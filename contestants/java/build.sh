#!/bin/sh
# Builds one Java contestant (the folder given, default the current one) with the pinned JDK (find-jdk.sh):
# build/server.jar + build/lib/*.jar, and build/java-home naming that JDK for run.sh.
# Quick when nothing changed: Maven runs only if the poms or sources are newer than the last build.
set -e
dir=$(cd "${1:-.}" && pwd)
root=$(cd "$(dirname "$0")" && pwd)
home=$("$root/find-jdk.sh")
stamp=$dir/build/java-home
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$home" ] &&
    [ -z "$(find "$root/pom.xml" "$dir/pom.xml" "$dir/src" -newer "$stamp" | head -n 1)" ]; then
    exit 0
fi
# Maven itself uses sun.misc.Unsafe; JDK 23+ warns about it unless told to allow it.
if "$home/bin/java" --sun-misc-unsafe-memory-access=allow -version >/dev/null 2>&1; then
    MAVEN_OPTS="${MAVEN_OPTS:+$MAVEN_OPTS }--sun-misc-unsafe-memory-access=allow"
    export MAVEN_OPTS
fi
JAVA_HOME=$home mvn -q -B -f "$root/pom.xml" -pl "$(basename "$dir")" -am package -DskipTests
echo "$home" > "$stamp"
