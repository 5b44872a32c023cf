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
# Prefork, pinned: `worker_cpu_affinity auto MASK` binds worker i to the i-th CPU of MASK, here the CPUs
# this script was started on (the server CPUs); `auto` alone would count from CPU 0 whatever the mask.
hex=$(sed -n 's/^Cpus_allowed:[[:space:]]*//p' /proc/self/status | tr -d ',')
mask=
while [ -n "$hex" ]; do
    digit=${hex%"${hex#?}"} hex=${hex#?}
    case $digit in
        0) bits=0000 ;; 1) bits=0001 ;; 2) bits=0010 ;; 3) bits=0011 ;;
        4) bits=0100 ;; 5) bits=0101 ;; 6) bits=0110 ;; 7) bits=0111 ;;
        8) bits=1000 ;; 9) bits=1001 ;; a|A) bits=1010 ;; b|B) bits=1011 ;;
        c|C) bits=1100 ;; d|D) bits=1101 ;; e|E) bits=1110 ;; f|F) bits=1111 ;;
    esac
    mask=$mask$bits
done
mask=$(printf '%s' "$mask" | sed 's/^0*//')
# As root, workers would switch to the build's default user (nobody); keep them as the caller.
# As any other user nginx cannot switch, and warns if asked to.
user=
if [ "$(id -u)" = 0 ]; then user="user root;"; fi
sed -e "s|@FILES@|${SB_FILES:-}|" "$dir/$scenario.conf" > "$prefix/locations.conf"
sed -e "s|@USER@|$user|" -e "s|@WORKERS@|$workers|" -e "s|@AFFINITY@|${mask:-1}|" -e "s|@NOFILE@|$nofile|" -e "s|@LISTEN@|$listen|" \
    -e "s|@LOCATIONS@|$prefix/locations.conf|" "$dir/nginx.conf.in" > "$prefix/nginx.conf"
exec nginx -p "$prefix/" -c "$prefix/nginx.conf" -e stderr
