package manifest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kvplan/kvplan/planfile"
)

// A worker's layout beyond tp, as each engine's flags say it. The engines
// count their ranks differently; layout turns the flags into the plan's
// one description (tp per data-parallel rank, data-parallel ranks, expert
// ranks, pipeline stages: GPUs per worker = tp × dp × pp):
//
//   - vLLM: --tensor-parallel-size T --data-parallel-size D: T × D GPUs,
//     D attention ranks of T; --enable-expert-parallel spreads the experts
//     over all T × D ranks (EP = T × D), else they are sharded T × D ways.
//   - SGLang: --tp-size is every GPU of the worker. With
//     --enable-dp-attention and --dp-size D, attention runs D ranks of
//     tp-size / D; without it --dp-size D is D replicas of tp-size GPUs.
//     --ep-size E spreads the experts (--moe-a2a-backend deepep sets E to
//     tp-size, SGLang's server_args).
//   - TensorRT-LLM: tensor_parallel_size T is every GPU of the worker;
//     enable_attention_dp runs attention on T ranks of tp 1;
//     moe_expert_parallel_size E spreads the experts (MoE tp = T / E).

func setEP(w *worker, v value) error {
	n, err := positiveInt(v.text)
	if err != nil {
		return err
	}
	w.ep = n
	w.set("expert_parallel_size", v.at)
	return nil
}

// setRedundantExperts reads EPLB's redundant experts: vLLM
// --num-redundant-experts N or --eplb-config's num_redundant_experts (a
// number or a numeric string, as Dynamo's recipes write it), SGLang
// --ep-num-redundant-experts.
func setRedundantExperts(w *worker, v value) error {
	text := v.text
	if strings.HasPrefix(strings.TrimSpace(text), "{") {
		var c map[string]any
		if err := json.Unmarshal([]byte(text), &c); err != nil {
			return fmt.Errorf("want a JSON object such as {\"num_redundant_experts\":32}")
		}
		switch n := c["num_redundant_experts"].(type) {
		case nil:
			return nil
		case float64:
			text = fmt.Sprint(n)
		case string:
			text = n
		default:
			return fmt.Errorf("num_redundant_experts: want a whole number")
		}
	}
	n, err := nonNegativeInt(text)
	if err != nil {
		return err
	}
	w.p.RedundantExperts = n
	w.set("redundant_experts", v.at)
	return nil
}

func nonNegativeInt(s string) (int, error) {
	var n int
	if _, err := fmt.Sscan(strings.TrimSpace(s), &n); err != nil || n < 0 || fmt.Sprint(n) != strings.TrimSpace(s) {
		return 0, fmt.Errorf("want a whole number of 0 or more")
	}
	return n, nil
}

func setEPLB(w *worker, v value) error {
	w.p.EPLB = v.on
	w.set("eplb", v.at)
	return nil
}

func setTwoBatchOverlap(w *worker, v value) error {
	w.p.TwoBatchOverlap = v.on
	w.set("two_batch_overlap", v.at)
	return nil
}

func setEnableEP(w *worker, v value) error {
	w.enableEP = v.on
	w.set("expert_parallel_size", v.at)
	return nil
}

func setDPAttention(w *worker, v value) error {
	w.dpAttention = v.on
	w.dpAttentionAt = v.at
	return nil
}

func setA2A(w *worker, v value) error {
	w.a2a = strings.TrimSpace(v.text)
	w.a2aAt = v.at
	return nil
}

// setVLLMSpeculative reads vLLM's --speculative-config: {"method":
// "deepseek_mtp" | "mtp" | "eagle" | "eagle3" | "ngram" | ..., "model": the
// draft, "num_speculative_tokens": N} (vllm/config/speculative.py).
func setVLLMSpeculative(w *worker, v value) error {
	var c map[string]any
	if err := json.Unmarshal([]byte(v.text), &c); err != nil {
		return fmt.Errorf("want a JSON object such as {\"method\":\"mtp\",\"num_speculative_tokens\":1}")
	}
	n, ok := c["num_speculative_tokens"].(float64)
	if !ok || n < 1 || n != float64(int(n)) || n > planfile.MaxSpeculativeTokens {
		return fmt.Errorf("num_speculative_tokens: want a whole number from 1 to %d", planfile.MaxSpeculativeTokens)
	}
	w.specTokens = int(n)
	w.set("speculative_tokens", v.at)
	method := jsonString(c, "method")
	switch draft := jsonString(c, "model"); {
	case draft != "":
		w.specModel = draft
	case method == "ngram":
		w.specModel = "ngram"
	}
	if w.specModel != "" {
		w.set("speculative_model", v.at)
	}
	return nil
}

// SGLang's --speculative-* flags: the algorithm (EAGLE, EAGLE3, NEXTN,
// STANDALONE, NGRAM), the draft model, and the chain it drafts: num-steps
// tokens proposed per step (num-draft-tokens = steps + 1 with topk 1).
func setSGLangSpecAlgorithm(w *worker, v value) error {
	alg := strings.ToUpper(strings.TrimSpace(v.text))
	switch alg {
	case "EAGLE", "EAGLE3", "NEXTN", "MTP", "STANDALONE", "NGRAM", "LOOKAHEAD":
	default:
		return fmt.Errorf("want EAGLE, EAGLE3, NEXTN, STANDALONE or NGRAM")
	}
	w.specAlgorithm, w.specAt = alg, v.at
	if alg == "NGRAM" || alg == "LOOKAHEAD" {
		w.specModel = "ngram"
		w.set("speculative_model", v.at)
	}
	return nil
}

func setSGLangSpecSteps(w *worker, v value) error {
	n, err := positiveInt(v.text)
	if err != nil {
		return err
	}
	w.specTokens = n
	w.set("speculative_tokens", v.at)
	return nil
}

func setSGLangSpecDraftTokens(w *worker, v value) error {
	n, err := positiveInt(v.text)
	if err != nil {
		return err
	}
	if w.specTokens == 0 && n > 1 {
		w.specTokens = n - 1 // a chain: the draft tokens verified include the bonus position
		w.set("speculative_tokens", v.at)
	}
	return nil
}

func setSGLangSpecDraftModel(w *worker, v value) error {
	w.specModel = strings.TrimSpace(v.text)
	w.set("speculative_model", v.at)
	return nil
}

// layout writes the worker's layout into its pool, as its engine counts
// ranks, and returns the GPUs one engine instance (a pod or a pod group)
// needs and how many workers of the plan it makes.
func (w *worker) layout() (gpusPerInstance, workersPerInstance int) {
	tp, dp, pp := max(1, w.tp), max(1, w.dp), max(1, w.pp)
	p := &w.p
	p.PipelineParallelSize = 0
	if pp > 1 {
		p.PipelineParallelSize = pp
	}
	p.TP, p.DataParallelSize, p.ExpertParallelSize = tp, 0, 0
	switch w.engine {
	case "sglang":
		ep := w.ep
		if strings.EqualFold(w.a2a, "deepep") && ep <= 1 {
			ep = tp // SGLang sets ep_size = tp_size for DeepEP
			w.note(w.a2aAt, "%s: --moe-a2a-backend deepep: SGLang spreads the experts over all %d ranks (ep-size = tp-size)", w.name, tp)
			w.set("expert_parallel_size", w.a2aAt)
		}
		if w.dpAttention && dp > 1 {
			if tp%dp == 0 {
				w.note(w.dpAttentionAt, "%s: --enable-dp-attention with --tp-size %d and --dp-size %d: %d attention ranks of tp %d each (SGLang's tp-size counts every GPU of the worker): layout %s, %d GPUs", w.name, tp, dp, dp, tp/dp, layoutText(tp/dp, dp, ep, pp), tp*pp)
			}
			if tp%dp != 0 {
				w.finding(Finding{ID: IDGPUCount, Severity: Deny, At: w.place["dp"], Field: "pools." + w.name + ".data_parallel_size",
					Message: fmt.Sprintf("%s: --dp-size %d does not divide --tp-size %d: with --enable-dp-attention each of the %d attention ranks takes tp-size / dp-size GPUs", w.name, dp, tp, dp),
					Why:     "SGLang's DP attention splits the tp-size GPUs of the worker into dp-size attention groups",
					Fix:     fmt.Sprintf("set --dp-size to a divisor of %d", tp)})
				return tp * pp, 1
			}
			p.TP, p.DataParallelSize = tp/dp, dp
			p.ExpertParallelSize = above1(ep)
			return tp * pp, 1
		}
		p.ExpertParallelSize = above1(ep)
		return tp * pp * dp, dp // dp-size replicas of tp-size GPUs each
	case "trtllm":
		if w.dpAttention && tp > 1 {
			p.TP, p.DataParallelSize = 1, tp
		}
		p.ExpertParallelSize = above1(w.ep)
		return tp * pp, 1
	}
	// vLLM
	p.DataParallelSize = above1(dp)
	if w.enableEP {
		p.ExpertParallelSize = above1(tp * dp)
	}
	return tp * pp * dp, 1
}

// speculative writes the worker's speculative decoding into its pool. The
// manifests do not say how many drafted tokens are accepted: kvplan plans
// an acceptance length of 1 (no drafted token accepted, the draft's cost
// without its gain) and says so.
func (w *worker) speculative() {
	if w.specTokens == 0 && (w.specAlgorithm != "" || w.specModel != "") {
		at, what := w.specAt, "--speculative-algorithm "+w.specAlgorithm
		if w.specAlgorithm == "" {
			at, what = w.place["speculative_model"], "--speculative-draft-model-path"
		}
		w.specTokens = 1
		w.set("speculative_tokens", at)
		w.note(at, "%s: %s without --speculative-num-steps: planned with 1 speculative token", w.name, what)
	}
	if w.specTokens == 0 {
		return
	}
	w.p.SpeculativeTokens, w.p.SpeculativeModel, w.p.AcceptanceLength = w.specTokens, w.specModel, 1
	w.note(w.place["speculative_tokens"], "%s: speculative decoding with %d tokens a step: the manifest does not say how many are accepted, so it is planned at an acceptance length of 1 (the draft's cost, none of its gain); set acceptance_length in a plan file", w.name, w.specTokens)
}

// layoutText is "tp1 dp8 ep8" (models.Parallelism's String, which this
// package does not import).
func layoutText(tp, dp, ep, pp int) string {
	s := fmt.Sprintf("tp%d", max(1, tp))
	for _, c := range []struct {
		name string
		n    int
	}{{"dp", dp}, {"ep", ep}, {"pp", pp}} {
		if c.n > 1 {
			s += fmt.Sprintf(" %s%d", c.name, c.n)
		}
	}
	return s
}

func above1(n int) int {
	if n > 1 {
		return n
	}
	return 0
}
