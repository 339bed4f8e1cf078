package manifest

import (
	"encoding/json"
	"strconv"

	"github.com/kvplan/kvplan/planfile"
)

// The worker layout as each entry point's arguments say it, the inverse of
// layout (parallel.go): the reader reads every argument written here back
// to the same pool fields. What an entry point has no argument for is an
// EmitError, never a silent drop.

// poolLayout is a pool's ranks, every count at least 1.
type poolLayout struct {
	tp, dp, ep, pp int
}

func layoutOf(p *planfile.Plan, pl *planfile.Pool) poolLayout {
	return poolLayout{tp: p.PoolTP(pl), dp: max(1, pl.DataParallelSize), ep: max(1, pl.ExpertParallelSize), pp: max(1, pl.PipelineParallelSize)}
}

func (l poolLayout) gpus() int { return l.tp * l.dp * l.pp }

// layoutArgs is the tensor-parallel value the entry point's tp flag takes
// and the arguments that follow it for data, expert and pipeline
// parallelism, EPLB and speculative decoding.
func (d *deployment) layoutArgs(ep *emitPool, f entryFlags) (tpValue int, args []string, err error) {
	l, pl := ep.layout, ep.pl
	tpValue = l.tp
	add := func(a ...string) { args = append(args, a...) }
	refuse := func(what string) error {
		return emitErrorf("pool %s: %s has no argument for %s: kvplan cannot write this plan for it", ep.name, f.entry, what)
	}
	switch f.entry {
	case "vllm serve", "dynamo.vllm":
		if l.dp > 1 {
			add("--data-parallel-size", strconv.Itoa(l.dp))
		}
		if l.ep > 1 {
			if l.ep != l.tp*l.dp {
				return 0, nil, emitErrorf("pool %s: vLLM's --enable-expert-parallel spreads the experts over all tp × dp = %d ranks; expert_parallel_size %d has no vLLM argument", ep.name, l.tp*l.dp, l.ep)
			}
			add("--enable-expert-parallel")
		}
		if pl.RedundantExperts > 0 {
			add("--enable-eplb", "--eplb-config", `{"num_redundant_experts":`+strconv.Itoa(pl.RedundantExperts)+`}`)
		} else if pl.EPLB {
			add("--enable-eplb")
		}
		if pl.TwoBatchOverlap {
			add("--enable-dbo")
		}
		if pl.SpeculativeTokens > 0 {
			c := map[string]any{"num_speculative_tokens": pl.SpeculativeTokens}
			switch pl.SpeculativeModel {
			case "":
				c["method"] = "mtp"
			case "ngram":
				c["method"] = "ngram"
			default:
				c["model"] = pl.SpeculativeModel
			}
			b, _ := json.Marshal(c) // strings and an int always marshal
			add("--speculative-config", string(b))
		}
	case "sglang.launch_server", "dynamo.sglang":
		if l.dp > 1 {
			// SGLang's tp-size counts every GPU of the worker; DP attention
			// splits it into dp-size ranks.
			tpValue = l.tp * l.dp
			add("--dp-size", strconv.Itoa(l.dp), "--enable-dp-attention")
		}
		if l.ep > 1 {
			add("--ep-size", strconv.Itoa(l.ep))
		}
		if pl.RedundantExperts > 0 {
			add("--ep-num-redundant-experts", strconv.Itoa(pl.RedundantExperts))
		}
		if pl.EPLB || pl.RedundantExperts > 0 {
			add("--enable-eplb")
		}
		if pl.TwoBatchOverlap {
			add("--enable-two-batch-overlap")
		}
		if n := pl.SpeculativeTokens; n > 0 {
			switch pl.SpeculativeModel {
			case "":
				add("--speculative-algorithm", "NEXTN")
			case "ngram":
				add("--speculative-algorithm", "NGRAM")
			default:
				add("--speculative-algorithm", "EAGLE", "--speculative-draft-model-path", pl.SpeculativeModel)
			}
			add("--speculative-num-steps", strconv.Itoa(n), "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", strconv.Itoa(n+1))
		}
	case "dynamo.trtllm", "trtllm-serve":
		if l.dp > 1 {
			if f.entry == "trtllm-serve" {
				return 0, nil, refuse("attention data parallelism (enable_attention_dp lives in its --config file)")
			}
			if l.tp != 1 {
				return 0, nil, emitErrorf("pool %s: TensorRT-LLM's attention data parallelism runs attention at tp 1 on every rank; tp %d × data_parallel_size %d has no TensorRT-LLM layout", ep.name, l.tp, l.dp)
			}
			tpValue = l.dp
			add("--enable-attention-dp")
		}
		if l.ep > 1 {
			flag := "--expert-parallel-size"
			if f.entry == "trtllm-serve" {
				flag = "--ep_size"
			}
			add(flag, strconv.Itoa(l.ep))
		}
		if pl.RedundantExperts > 0 || pl.EPLB || pl.TwoBatchOverlap {
			return 0, nil, refuse("EPLB or two-batch overlap")
		}
		if pl.SpeculativeTokens > 0 {
			return 0, nil, refuse("speculative decoding (speculative_config lives in its engine file)")
		}
	default:
		if l != (poolLayout{tp: l.tp, dp: 1, ep: 1, pp: 1}) || pl.SpeculativeTokens > 0 {
			return 0, nil, refuse("data, expert or pipeline parallelism")
		}
	}
	if l.pp > 1 {
		flag := map[string]string{"vllm serve": "--pipeline-parallel-size", "dynamo.vllm": "--pipeline-parallel-size",
			"sglang.launch_server": "--pp-size", "dynamo.sglang": "--pp-size", "dynamo.trtllm": "--pipeline-parallel-size", "trtllm-serve": "--pp_size"}[f.entry]
		if flag == "" {
			return 0, nil, refuse("pipeline parallelism")
		}
		add(flag, strconv.Itoa(l.pp))
	}
	return tpValue, args, nil
}

// layoutText is "tp 8" for tensor parallelism alone (as the header has
// always said it), else "tp1 dp16 ep16".
func (ep *emitPool) layoutText() string {
	l := ep.layout
	if l.dp == 1 && l.ep == 1 && l.pp == 1 {
		return "tp " + strconv.Itoa(ep.tp)
	}
	return layoutText(l.tp, l.dp, l.ep, l.pp)
}

// spanNodes splits each worker wider than one node into whole nodes of
// o.NodeGPUs (8 when unset): Dynamo's multinode.nodeCount pods of that many
// GPUs each, as its wide-EP recipes run them, or for llm-d a LeaderWorkerSet
// group of that many pods whose data-parallel ranks split over the pods (as
// llm-d's wide-EP guide runs them; tensor or pipeline parallelism across
// pods it does not write). The other formats write single-node workers, and
// refuse a wider one.
func (d *deployment) spanNodes(format string) error {
	node := d.o.NodeGPUs
	if node <= 0 {
		node = 8
	}
	for _, ep := range d.pools {
		if ep.gpus <= node {
			continue
		}
		switch {
		case format != EmitDynamo && format != EmitLLMD:
			return emitErrorf("pool %s: a worker of %s is %d GPUs, more than one node of %d: kvplan writes multi-node workers as a DynamoGraphDeployment (--emit dynamo, multinode.nodeCount) or an llm-d LeaderWorkerSet group (--emit llm-d)", ep.name, ep.layoutText(), ep.gpus, node)
		case ep.gpus%node != 0:
			return emitErrorf("pool %s: a worker of %d GPUs does not split into whole nodes of %d GPUs", ep.name, ep.gpus, node)
		}
		ep.nodes = ep.gpus / node
		if l := ep.layout; format == EmitLLMD && (l.pp > 1 || l.tp > node || l.dp%ep.nodes != 0) {
			return emitErrorf("pool %s: a worker of %s spans %d nodes by tensor or pipeline parallelism: kvplan writes llm-d workers over several pods only when their data-parallel ranks split over the pods (tp up to %d); emit it as a DynamoGraphDeployment (--emit dynamo)", ep.name, ep.layoutText(), ep.nodes, node)
		}
	}
	return nil
}

// multinode is Dynamo's multinode block of a worker over several nodes; nil
// (left out) on one node.
func (ep *emitPool) multinode() any {
	if ep.nodes <= 1 {
		return nil
	}
	return ymap("nodeCount", ep.nodes)
}
