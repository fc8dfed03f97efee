#!/usr/bin/env bash
# Fetches uPlot from the npm registry and checks it against SHA256SUMS.
#
#   third_party/uplot/refresh.sh            the version in VERSION: the
#                                           files must match SHA256SUMS
#   third_party/uplot/refresh.sh 1.6.33 --accept
#                                           another version: writes VERSION
#                                           and SHA256SUMS anew (review the
#                                           diff before committing)
#
# npm pack verifies the tarball against the registry's integrity hash;
# SHA256SUMS pins the three files the report embeds (dist/uPlot.iife.min.js,
# dist/uPlot.min.css, LICENSE), so a changed file under the same version
# number fails here.
set -euo pipefail
cd "$(dirname "$0")"

version=${1:-$(cat VERSION)}
accept=${2:-}
case $accept in
"" | --accept) ;;
*)
	echo "refresh.sh: unknown argument $accept (want --accept)" >&2
	exit 2
	;;
esac
if ! [[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
	echo "refresh.sh: version $version is not an exact version (want e.g. 1.6.32)" >&2
	exit 2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "uplot@$version" >/dev/null)
tar -xzf "$tmp/uplot-$version.tgz" -C "$tmp"
cp "$tmp/package/dist/uPlot.iife.min.js" "$tmp/package/dist/uPlot.min.css" "$tmp/package/LICENSE" .

if [ "$accept" = --accept ]; then
	echo "$version" >VERSION
	sha256sum uPlot.iife.min.js uPlot.min.css LICENSE >SHA256SUMS
	echo "refresh.sh: uplot $version; VERSION and SHA256SUMS rewritten"
	exit 0
fi
if [ "$version" != "$(cat VERSION)" ]; then
	echo "refresh.sh: $version is not VERSION's $(cat VERSION); add --accept to switch" >&2
	exit 1
fi
sha256sum --quiet -c SHA256SUMS
echo "refresh.sh: uplot $version matches SHA256SUMS"
