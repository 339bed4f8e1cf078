// Command floor is the start-up floor that BenchmarkStartup runs beside
// kvplan: a Go binary that links the design card's four libraries
// (urfave/cli/v2, BurntSushi/toml, expr, tablewriter) and, with the argument
// "tables", prints the three tables of `kvplan disagg --model qwen3-0.6b
// --link 1gbe` through tablewriter as report/table.go does (its renderer,
// driven by internal/plaintable, which imports tablewriter alone). It does
// nothing else: what kvplan takes beyond it is kvplan's own.
package main

import (
	"os"

	_ "github.com/BurntSushi/toml"
	_ "github.com/expr-lang/expr"
	_ "github.com/olekukonko/tablewriter"
	_ "github.com/urfave/cli/v2"

	"github.com/kvplan/kvplan/internal/plaintable"
)

// tables are disagg's, as it prints them for qwen3-0.6b over 1gbe.
var tables = [][][]string{
	{{"figure", "value"},
		{"KV dtype, tensor parallel", "bf16, tp 1"},
		{"KV per token (the model's)", "112 KiB (114688 B)"},
		{"KV per request (the model's)", "164 MiB (172032000 B)"},
		{"crossing the link per request", "164 MiB (172032000 B)"}},
	{{"figure", "value", "note"},
		{"on the busiest path", "164 MiB (172032000 B)", "rate per node: every rank's KV crosses one path"},
		{"effective throughput", "104 MB/s", "latency 0.200 ms per transfer"},
		{"transfer alone", "1654.4 ms", ""},
		{"transfer while shared", "1654.4 ms", "1 in flight, 104 MB/s each"}},
	{{"figure", "value", "note"},
		{"request (frontend path)", "13.00 ms", "the frontend's HTTP, tokenization, routing"},
		{"prefill", "9.97 ms", "estimated on h100-sxm"},
		{"prefill freed from decode", "9.97 ms", "what the split gains per request"},
		{"TTFT aggregated", "22.97 ms", "request + prefill"},
		{"TTFT disaggregated", "1677.3 ms", "request + prefill + shared transfer"},
		{"ratio", "73.02×", "disaggregated / aggregated"}},
}

func main() {
	if len(os.Args) < 2 || os.Args[1] != "tables" {
		os.Stdout.WriteString("hello, world\n")
		return
	}
	for _, tb := range tables {
		if ok, err := plaintable.Write(os.Stdout, tb[0], tb[1:]); !ok || err != nil {
			os.Exit(1)
		}
	}
}
