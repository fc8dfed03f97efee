//go:build !race

package fastcgi

const raceEnabled = false
