package models

import (
	"fmt"
	"strings"

	"github.com/kvplan/kvplan/catalog"
)

// Parallelism is one worker's layout, named as the engines name it. The zero
// value of a field means "none" (1); use Norm before reading it.
//
//   - TP: tensor-parallel ranks of attention and dense layers, per
//     data-parallel rank (vLLM --tensor-parallel-size, SGLang --tp-size /
//     dp-size with DP attention, TRT-LLM tensor_parallel_size / dp).
//   - DP: attention data-parallel ranks. Each holds its own KV and its own
//     batch; on a dense model they are D replicas behind one endpoint (vLLM
//     --data-parallel-size), on an MoE model they share the expert layers
//     (SGLang --enable-dp-attention, TRT-LLM enable_attention_dp).
//   - EP: ranks the routed experts are spread over. The MoE layer's tensor
//     parallelism is then TP × DP / EP (TRT-LLM "tp 8 ep 2" is MoE TP 4 ×
//     EP 2; vLLM --enable-expert-parallel is EP = TP × DP).
//   - PP: pipeline stages; each holds Layers / PP of the decoder layers.
//   - SpeculativeTokens, AcceptanceLength: MTP heads or a draft model
//     proposing N tokens per step, L accepted per target step on average
//     (bonus token included, as TRT-LLM and SGLang report it; 1 ≤ L ≤ N + 1).
//
// GPUs per worker = TP × DP × PP.
type Parallelism struct {
	TP, DP, EP, PP    int
	SpeculativeTokens int
	AcceptanceLength  float64
}

// Norm returns p with every unset count made 1 (EP 1: experts split by the
// MoE tensor parallelism only).
func (p Parallelism) Norm() Parallelism {
	for _, f := range []*int{&p.TP, &p.DP, &p.EP, &p.PP} {
		if *f <= 0 {
			*f = 1
		}
	}
	return p
}

// GPUs is the GPUs of one worker: TP × DP × PP.
func (p Parallelism) GPUs() int {
	n := p.Norm()
	return n.TP * n.DP * n.PP
}

// MoETP is the tensor parallelism inside each expert: TP × DP / EP.
func (p Parallelism) MoETP() int {
	n := p.Norm()
	if n.EP <= 0 || (n.TP*n.DP)%n.EP != 0 {
		return 1
	}
	return n.TP * n.DP / n.EP
}

// Plain reports whether p is tensor parallelism alone (what kvplan modelled
// before expert, data and pipeline parallelism).
func (p Parallelism) Plain() bool {
	n := p.Norm()
	return n.DP == 1 && n.EP == 1 && n.PP == 1 && n.SpeculativeTokens == 0
}

// String names p as "tp1 dp8 ep8", leaving out the counts that are 1.
func (p Parallelism) String() string {
	n := p.Norm()
	parts := []string{fmt.Sprintf("tp%d", n.TP)}
	if n.DP > 1 {
		parts = append(parts, fmt.Sprintf("dp%d", n.DP))
	}
	if n.EP > 1 {
		parts = append(parts, fmt.Sprintf("ep%d", n.EP))
	}
	if n.PP > 1 {
		parts = append(parts, fmt.Sprintf("pp%d", n.PP))
	}
	if n.SpeculativeTokens > 0 {
		parts = append(parts, fmt.Sprintf("mtp%d", n.SpeculativeTokens))
	}
	return strings.Join(parts, " ")
}

// Check reports why p cannot serve m, with the counts and what would be
// accepted; nil when it can. It checks the layout only (heads per rank are
// CheckTP's).
func (p Parallelism) Check(m *catalog.Model) error {
	if p.TP < 0 || p.DP < 0 || p.EP < 0 || p.PP < 0 || p.SpeculativeTokens < 0 {
		return fmt.Errorf("parallel sizes must be >= 1 (got %s)", p.raw())
	}
	n := p.Norm()
	if n.EP > 1 {
		if m.MoE == nil || m.MoE.Experts <= 0 {
			return fmt.Errorf("expert-parallel-size %d needs a mixture-of-experts model; %s is dense (use data-parallel-size for replicas)", n.EP, m.Name)
		}
		if (n.TP*n.DP)%n.EP != 0 {
			return fmt.Errorf("expert-parallel-size %d must divide tp × dp = %d × %d = %d (the MoE layer's ranks); accepted: %s", n.EP, n.TP, n.DP, n.TP*n.DP, divisorsText(n.TP*n.DP))
		}
		if m.MoE.Experts%n.EP != 0 {
			r := n.EP - m.MoE.Experts%n.EP
			return fmt.Errorf("expert-parallel-size %d does not divide the %d routed experts of %s; %d redundant experts (EPLB) would make it %d, or use an EP that divides %d", n.EP, m.MoE.Experts, m.Name, r, m.MoE.Experts+r, m.MoE.Experts)
		}
	}
	if n.PP > 1 && m.Layers > 0 && n.PP > m.Layers {
		return fmt.Errorf("pipeline-parallel-size %d exceeds the %d layers of %s", n.PP, m.Layers, m.Name)
	}
	if n.SpeculativeTokens > 0 {
		if n.AcceptanceLength < 1 || n.AcceptanceLength > float64(n.SpeculativeTokens+1) {
			return fmt.Errorf("acceptance-length %g must be between 1 and speculative-tokens + 1 = %d (mean tokens accepted per target step, bonus token included)", n.AcceptanceLength, n.SpeculativeTokens+1)
		}
	} else if n.AcceptanceLength != 0 {
		return fmt.Errorf("acceptance-length %g given without speculative-tokens", n.AcceptanceLength)
	}
	return nil
}

func (p Parallelism) raw() string {
	return fmt.Sprintf("tp %d, dp %d, ep %d, pp %d, speculative tokens %d", p.TP, p.DP, p.EP, p.PP, p.SpeculativeTokens)
}

func divisorsText(n int) string {
	var d []string
	for i := 1; i <= n; i++ {
		if n%i == 0 {
			d = append(d, fmt.Sprint(i))
		}
	}
	return strings.Join(d, ", ")
}
