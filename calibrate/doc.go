// Package calibrate sets kvplan's engine model against the user's own
// benchmark results (package benchresult) and fits its efficiencies to
// them.
//
// A run of a result file becomes a Case: its set-up resolved against the
// catalog (what the file does not say comes from Given, the command's
// flags; a flag that contradicts the file is an error naming both) and its
// load. Case.Predict predicts what the run measured: a closed loop with
// more prompts than clients, and an offline run at the engine's batch cap,
// through kvplan perf's closed-loop replay (planner.PlanPerf, the same code
// as kvplan perf); a request rate, every request at once, or a closed loop
// whose prompts all fit its clients through the timed simulator (package
// sim, as kvplan simulate runs it) over every request of the run, lengths
// request by request when the file has them.
//
// Calibrate fits the efficiencies (Params) the runs constrain for their GPU
// × engine × weight dtype, regularised toward the entry they use now, and
// CatalogFile writes the result as a user catalog file that --catalog
// takes. Nothing below this package imports it.
package calibrate
