#!/bin/sh
# Writes build/<port>/nginx.conf from nginx.conf.in and the scenario's locations (file: with the
# folder $SB_FILES), then becomes nginx: the master is the process that gets SIGTERM (fast shutdown
# of the master and its workers).
# usage: run.sh <scenario> <host> <port> <workers>
set -eu
if [ $# -ne 4 ]; then
    echo "usage: run.sh <scenario> <host> <port> <workers>" >&2
    exit 2
fi
scenario=$1 host=$2 port=$3 workers=$4
case $scenario in
    hello|plaintext) ;;
    file)
        if [ -z "${SB_FILES:-}" ]; then
            echo "file needs SB_FILES, the folder of its files" >&2
            exit 2
        fi ;;
    *) echo "unsupported scenario: $scenario" >&2; exit 2 ;;
esac
case $host in
    *:*) listen="[$host]:$port" ;;
    *) listen="$host:$port" ;;
esac
dir=$(cd "$(dirname "$0")" && pwd)
prefix=$dir/build/$port
mkdir -p "$prefix"
# The workers' open-files limit: the hard limit, read here since nginx cannot go above it.
nofile=$(ulimit -Hn)
case $nofile in
    ''|*[!0-9]*) nofile=1048576 ;;    # "unlimited"
esac
# As root, workers would switch to the build's default user (nobody); keep them as the caller.
# As any other user nginx cannot switch, and warns if asked to.
user=
if [ "$(id -u)" = 0 ]; then user="user root;"; fi
sed -e "s|@FILES@|${SB_FILES:-}|" "$dir/$scenario.conf" > "$prefix/locations.conf"
sed -e "s|@USER@|$user|" -e "s|@WORKERS@|$workers|" -e "s|@NOFILE@|$nofile|" -e "s|@LISTEN@|$listen|" \
    -e "s|@LOCATIONS@|$prefix/locations.conf|" "$dir/nginx.conf.in" > "$prefix/nginx.conf"
exec nginx -p "$prefix/" -c "$prefix/nginx.conf" -e stderr
