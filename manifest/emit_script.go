package manifest

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kvplan/kvplan/planfile"
)

// Ports the scripts use: workers listen from basePort up on each node,
// the router on routerPort of node 0.
const (
	basePort      = 8000
	routerPort    = 8080
	nixlSidePort  = 5600 // vLLM's NIXL side channel, one per worker on a node
	bootstrapPort = 8998 // SGLang's disaggregation bootstrap server, one per prefill worker on a node
)

// placed is one worker of a script: its pool, node, GPUs and port.
type placed struct {
	ep    *emitPool
	index int // worker of its pool, from 1
	node  int
	gpus  []int
	port  int
	slot  int // workers before it on its node
}

// place puts the workers on nodes of nodeGPUs GPUs each, in pool order:
// a worker takes the next free GPUs of the current node, or starts a node
// when they are too few (a worker's tensor-parallel ranks stay on one node).
func (d *deployment) place() ([]placed, int, error) {
	nodeGPUs := d.o.NodeGPUs
	if nodeGPUs <= 0 {
		nodeGPUs = 8
	}
	var out []placed
	node, used, slot := 0, 0, 0
	for _, ep := range d.pools {
		if ep.gpus > nodeGPUs {
			return nil, 0, emitErrorf("pool %s: a worker of tp %d spans more than one node of %d GPUs: kvplan writes single-node workers", ep.name, ep.tp, nodeGPUs)
		}
		for i := 1; i <= max(1, ep.pl.Workers); i++ {
			if used+ep.gpus > nodeGPUs {
				node, used, slot = node+1, 0, 0
			}
			g := make([]int, ep.gpus)
			for k := range g {
				g[k] = used + k
			}
			out = append(out, placed{ep: ep, index: i, node: node, gpus: g, port: basePort + slot, slot: slot})
			used += ep.gpus
			slot++
		}
	}
	return out, node + 1, nil
}

// script writes a POSIX shell script with one engine command line per
// worker, grouped by node, and the router (vllm-router, SGLang's router,
// or trtllm-serve disaggregated) on node 0.
func (d *deployment) script() ([]byte, error) {
	workers, nodes, err := d.place()
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, w := range workers {
		line, err := d.scriptLine(w)
		if err != nil {
			return nil, err
		}
		lines = append(lines, line)
	}
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	format := EmitVLLM
	switch d.engine {
	case "sglang":
		format = EmitSGLang
	case "trtllm":
		format = EmitTRTLLM
	}
	for _, h := range d.header(format) {
		if h == "" {
			b.WriteString("#\n")
		} else {
			b.WriteString("# " + h + "\n")
		}
	}
	fmt.Fprintf(&b, "#\n# %d node(s) of %d GPUs. Run this script on each, with NODE set to the node's index and HOSTS to the\n", nodes, d.nodeGPUs())
	fmt.Fprintf(&b, "# nodes' addresses in order; node 0 also runs the router on port %d:\n", routerPort)
	name := d.o.FileName
	if name == "" {
		name = scriptName(format)
	}
	fmt.Fprintf(&b, "#   NODE=0 HOSTS=\"10.0.0.1%s\" sh %s\n", moreHosts(nodes), shellQuote(name))
	b.WriteString("set -eu\n")
	fmt.Fprintf(&b, ": \"${NODE:?set NODE to the index of this node, 0 to %d}\"\n", nodes-1)
	b.WriteString(": \"${HOSTS:=127.0.0.1}\"\n")
	b.WriteString("host() { i=$1; set -- $HOSTS; shift \"$i\"; echo \"$1\"; }\n")
	b.WriteString(d.scriptPrelude())
	b.WriteString("\ncase \"$NODE\" in\n")
	for n := 0; n < nodes; n++ {
		fmt.Fprintf(&b, "%d)\n", n)
		for i, w := range workers {
			if w.node != n {
				continue
			}
			fmt.Fprintf(&b, "  # %s worker %d of %d (%s, tp %d)\n", w.ep.name, w.index, max(1, w.ep.pl.Workers), w.ep.pl.Role, w.ep.tp)
			b.WriteString("  " + lines[i] + " &\n")
		}
		b.WriteString("  ;;\n")
	}
	fmt.Fprintf(&b, "*)\n  echo \"NODE=$NODE: this deployment has nodes 0 to %d\" >&2\n  exit 2\n  ;;\nesac\n", nodes-1)
	if r := d.router(workers); r != "" {
		b.WriteString("\nif [ \"$NODE\" = 0 ]; then\n" + r + "fi\n")
	}
	b.WriteString("wait\n")
	return []byte(b.String()), nil
}

func (d *deployment) nodeGPUs() int {
	if d.o.NodeGPUs <= 0 {
		return 8
	}
	return d.o.NodeGPUs
}

func moreHosts(nodes int) string {
	var b strings.Builder
	for i := 1; i < min(nodes, 3); i++ {
		fmt.Fprintf(&b, " 10.0.0.%d", i+1)
	}
	if nodes > 3 {
		b.WriteString(" ...")
	}
	return b.String()
}

func scriptName(format string) string { return "serve-" + format + ".sh" }

// scriptPrelude is what the engine needs before its workers start:
// TensorRT-LLM's disaggregated workers read their cache transceiver from
// an options file.
func (d *deployment) scriptPrelude() string {
	if d.engine == "trtllm" && d.disagg {
		return "cat > kvplan-trtllm-disagg.yaml <<'EOF'\ncache_transceiver_config:\n  backend: DEFAULT\nEOF\n"
	}
	return ""
}

// scriptLine is one worker's command line, with its GPUs and the variables
// its engine reads.
func (d *deployment) scriptLine(w placed) (string, error) {
	gpus := make([]string, len(w.gpus))
	for i, g := range w.gpus {
		gpus[i] = strconv.Itoa(g)
	}
	env := []string{"CUDA_VISIBLE_DEVICES=" + strings.Join(gpus, ",")}
	var argv []string
	switch d.engine {
	case "vllm":
		a, err := d.vllmServeArgs(w.ep, w.port)
		if err != nil {
			return "", err
		}
		if w.ep.pl.Role != planfile.RoleAggregated {
			env = append(env, fmt.Sprintf("VLLM_NIXL_SIDE_CHANNEL_PORT=%d", nixlSidePort+w.slot), `VLLM_NIXL_SIDE_CHANNEL_HOST="$(host "$NODE")"`)
		}
		argv = append([]string{"vllm", "serve"}, a...)
	case "sglang":
		a, err := d.engineArgs(w.ep, flagsSGLang, w.port)
		if err != nil {
			return "", err
		}
		if role := w.ep.pl.Role; role != planfile.RoleAggregated {
			a = append(a, "--disaggregation-mode", role, "--disaggregation-transfer-backend", "nixl")
			if role == planfile.RolePrefill {
				a = append(a, "--disaggregation-bootstrap-port", strconv.Itoa(bootstrapPort+w.slot))
			}
		}
		argv = append([]string{"python3", "-m", "sglang.launch_server"}, a...)
	case "trtllm":
		a, err := d.engineArgs(w.ep, flagsTRTLLMServe, w.port)
		if err != nil {
			return "", err
		}
		if w.ep.pl.Role != planfile.RoleAggregated {
			a = append(a, "--extra_llm_api_options", "kvplan-trtllm-disagg.yaml")
		}
		argv = append([]string{"trtllm-serve"}, a...)
	}
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = shellQuote(a)
	}
	return strings.Join(env, " ") + " " + strings.Join(q, " "), nil
}

// url is a worker's address as the router on node 0 reaches it.
func (w placed) url() string { return fmt.Sprintf(`"http://$(host %d):%d"`, w.node, w.port) }

// router is the command that spreads requests over the workers (node 0).
func (d *deployment) router(workers []placed) string {
	policy := "round_robin"
	if d.kv {
		policy = "cache_aware"
	}
	var pre, dec, all []string
	for _, w := range workers {
		all = append(all, w.url())
		switch w.ep.pl.Role {
		case planfile.RolePrefill:
			if d.engine == "sglang" {
				pre = append(pre, "--prefill "+w.url()+" "+strconv.Itoa(bootstrapPort+w.slot))
			} else {
				pre = append(pre, "--prefill "+w.url())
			}
		case planfile.RoleDecode:
			dec = append(dec, "--decode "+w.url())
		}
	}
	listen := fmt.Sprintf("--host 0.0.0.0 --port %d", routerPort)
	switch d.engine {
	case "vllm":
		// vllm-project/router (README @03e9af5c): --vllm-pd-disaggregation
		// with --prefill and --decode URLs for the NIXL connector.
		if d.disagg {
			return fmt.Sprintf("  vllm-router --policy %s --vllm-pd-disaggregation %s %s %s &\n", policy, strings.Join(pre, " "), strings.Join(dec, " "), listen)
		}
		return fmt.Sprintf("  vllm-router --policy %s --worker-urls %s %s &\n", policy, strings.Join(all, " "), listen)
	case "sglang":
		// sglang_router.launch_router: --pd-disaggregation with --prefill URL
		// BOOTSTRAP_PORT and --decode URL.
		if d.disagg {
			return fmt.Sprintf("  python3 -m sglang_router.launch_router --pd-disaggregation --policy %s %s %s %s &\n", policy, strings.Join(pre, " "), strings.Join(dec, " "), listen)
		}
		return fmt.Sprintf("  python3 -m sglang_router.launch_router --policy %s --worker-urls %s %s &\n", policy, strings.Join(all, " "), listen)
	}
	// trtllm-serve disaggregated reads the context (prefill) and generation
	// (decode) servers from a configuration file.
	if !d.disagg {
		return "  : # trtllm-serve has no router of its own for aggregated workers: put an HTTP load balancer in front of them\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "  cat > kvplan-trtllm-router.yaml <<EOF\nhostname: 0.0.0.0\nport: %d\ncontext_servers:\n  num_instances: %d\n  urls:\n", routerPort, len(pre))
	for _, w := range workers {
		if w.ep.pl.Role == planfile.RolePrefill {
			fmt.Fprintf(&b, "    - \"$(host %d):%d\"\n", w.node, w.port)
		}
	}
	fmt.Fprintf(&b, "generation_servers:\n  num_instances: %d\n  urls:\n", len(dec))
	for _, w := range workers {
		if w.ep.pl.Role == planfile.RoleDecode {
			fmt.Fprintf(&b, "    - \"$(host %d):%d\"\n", w.node, w.port)
		}
	}
	b.WriteString("EOF\n  trtllm-serve disaggregated -c kvplan-trtllm-router.yaml &\n")
	return b.String()
}
