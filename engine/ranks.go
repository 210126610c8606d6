package engine

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/stepdoctor/stepdoctor/engine/facts"
	"github.com/stepdoctor/stepdoctor/internal/objstore"
)

// Rank sources, in the order they are tried.
const (
	RankFromDistributedInfo = "distributedInfo"
	RankFromFileName        = "file name"
	RankFromInputOrder      = "input order"
)

// rankInName matches rank numbers in trace file names: rank-3, rank_3,
// rank3, worker3 (tensorboard_trace_handler's worker name), _rank_3.
var rankInName = regexp.MustCompile(`(?i)(?:rank|worker)[-_]?(\d+)`)

// assignRanks sets each trace's rank and says whether the traces are the
// ranks of one job: distributedInfo ranks when every trace has one and they
// are distinct, else rank numbers in the file names (rank3, worker3) when
// every name has a distinct one. Otherwise ranks follow the input order
// and the traces are analyzed separately; the returned note says why.
func assignRanks(trs []*TraceResult) (ranks bool, note string) {
	fromInfo, fromName := true, true
	seenInfo, seenName := map[int64]string{}, map[int64]bool{}
	names := make([]int64, len(trs))
	for i, tr := range trs {
		if r := tr.Facts.Rank; r == nil {
			fromInfo = false
		} else if other, dup := seenInfo[*r]; dup {
			fromInfo = false
			note = fmt.Sprintf("rank %d appears in %s and %s (several profiling cycles or runs?): traces are analyzed separately, without cross-rank facts", *r, other, tr.Input.Path)
		} else {
			seenInfo[*r] = tr.Input.Path
		}
		m := rankInName.FindStringSubmatch(filepath.Base(objstore.Name(tr.Input.Path)))
		if m == nil {
			fromName = false
			continue
		}
		n, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil || seenName[n] {
			fromName = false
			continue
		}
		seenName[n], names[i] = true, n
	}
	if note != "" {
		fromName = false
	}
	for i, tr := range trs {
		r := int64(i)
		switch {
		case fromInfo:
			r, tr.RankSource = *tr.Facts.Rank, RankFromDistributedInfo
		case fromName:
			r, tr.RankSource = names[i], RankFromFileName
			if tr.Facts.Rank == nil && len(trs) > 1 {
				tr.Facts.Rank = ptr(r)
			}
		default:
			tr.RankSource = RankFromInputOrder
		}
		tr.Rank = &r
	}
	ranks = fromInfo || fromName
	if !ranks && note == "" && len(trs) > 1 {
		note = fmt.Sprintf("%d traces without rank identity (no distinct distributedInfo ranks or rank numbers in the file names): analyzed separately, without cross-rank facts", len(trs))
	}
	return ranks, note
}

// crossRank applies the cross-rank facts (facts.CrossRank) to every trace
// when there are two or more.
func crossRank(trs []*TraceResult) {
	fs := make([]*facts.Facts, len(trs))
	for i, tr := range trs {
		fs[i] = tr.Facts
	}
	for i, c := range facts.CrossRank(fs) {
		trs[i].Facts.ApplyCrossRank(c)
	}
}

func ptr[T any](v T) *T { return &v }
