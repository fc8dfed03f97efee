// Package uplot embeds uPlot (https://github.com/leeoniya/uPlot, MIT
// licence in LICENSE), the charting library of topobench's HTML report,
// as the npm registry ships it: the version in VERSION, the files pinned
// by SHA256SUMS. refresh.sh fetches them again (npm pack) and checks them;
// nothing here is edited by hand.
package uplot

import (
	_ "embed"
	"strings"
)

var (
	//go:embed uPlot.iife.min.js
	js string
	//go:embed uPlot.min.css
	css string
	//go:embed LICENSE
	license string
	//go:embed VERSION
	version string
	//go:embed SHA256SUMS
	sums string
)

// JS is dist/uPlot.iife.min.js: a script that defines the global uPlot.
func JS() string { return js }

// CSS is dist/uPlot.min.css.
func CSS() string { return css }

// License is the library's licence text.
func License() string { return license }

// Version is the npm version embedded ("1.6.32").
func Version() string { return strings.TrimSpace(version) }

// Sums is SHA256SUMS: the sha256sum lines of the three files.
func Sums() string { return sums }
