package results

import "time"

// CPUSplit is how -cpus auto divided the CPUs between the load generator
// and the servers: a short calibration measured what a request costs each
// side, and the split chosen is the one that gives the servers the most
// CPUs while the load generator keeps headroom (under LoadBoundShare of
// its CPUs) at the servers' saturation (internal/sweep, calibrate.go).
type CPUSplit struct {
	// CPUs is how many CPUs were divided; Load and Server the lists
	// chosen (empty when fewer than 2 CPUs left both unpinned).
	CPUs   int    `json:"cpus"`
	Load   string `json:"load,omitempty"`
	Server string `json:"server,omitempty"`
	// CalibrationLoad and CalibrationServer are the lists the calibration
	// ran on; Generator, Connections, GOMAXPROCS and Duration what it ran
	// (the plan's generator and most connections and processors).
	CalibrationLoad   string        `json:"calibration_load,omitempty"`
	CalibrationServer string        `json:"calibration_server,omitempty"`
	Generator         Generator     `json:"generator,omitempty"`
	Connections       int           `json:"connections,omitempty"`
	GOMAXPROCS        int           `json:"gomaxprocs,omitempty"`
	Duration          time.Duration `json:"duration_ns,omitempty"`
	// Took is the calibration's wall time, the servers' start included.
	Took time.Duration `json:"took_ns,omitempty"`
	// Figures are the calibration's measurements, one per path.
	Figures []SplitFigure `json:"figures,omitempty"`
	// Headroom is true when the split keeps every calibrated path's
	// predicted load share under LoadBoundShare.
	Headroom bool `json:"headroom"`
	// Note says what the split could not do (a path that will be
	// load-bound, or that no split keeps the load side out of the way).
	Note string `json:"note,omitempty"`
}

// SplitFigure is one calibrated path.
type SplitFigure struct {
	Topology string `json:"topology"`
	// Reference marks a ceiling (nginx-return): headroom for it is
	// wanted, not required.
	Reference bool    `json:"reference,omitempty"`
	ReqPerSec float64 `json:"req_per_sec"`
	// LoadUS and ServerUS are the CPU µs per request of the load
	// generator and of the servers (nginx and the server together).
	LoadUS   float64 `json:"load_us"`
	ServerUS float64 `json:"server_us"`
	// LoadShare is the load generator's share of its CPUs during the
	// calibration run.
	LoadShare float64 `json:"load_share"`
	// Parallel is the most CPUs the path's servers can use (GOMAXPROCS
	// for a Go server alone); 0 for all they are given.
	Parallel int `json:"parallel,omitempty"`
	// Predicted is the load generator's share of its CPUs the model
	// predicts at the servers' saturation with the chosen split.
	Predicted float64 `json:"predicted_load_share"`
}
