// Command kvplan plans LLM-serving deployments: KV sizes, disaggregation,
// memory, prefix routing and policy checks. See README.md.
package main

import "os"

func main() {
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}
