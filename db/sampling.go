package db

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"gorm.io/gorm"

	"github.com/cascade-sim/cascade"
)

// A sampling plan is a row of sampling_plans (cascade.SamplingPlan's
// fields but its strata) and one row of sampling_strata per stratum. A
// stratum's members, up to a million launch positions, are one blob of
// varint deltas (a byte or two a launch, as members are ascending and
// mostly close), its representatives one small JSON array: a plan of a
// 1,000,000-launch trace is a few thousand rows, not a million.

// samplingStratumRow is a stored stratum of a plan.
type samplingStratumRow struct {
	PlanID           string `gorm:"primaryKey"`
	Idx              int    `gorm:"primaryKey;autoIncrement:false"`
	Name             string
	GridX            *int
	GridY            *int
	GridZ            *int
	BlockX           *int
	BlockY           *int
	BlockZ           *int
	Size             int
	MeanDurationNs   *float64
	CVDuration       *float64 `gorm:"column:cv_duration"`
	MeanInstructions float64
	CVInstructions   float64 `gorm:"column:cv_instructions"`
	Members          []byte
	Representatives  []byte
	Why              string  `gorm:"not null;default:''"`
	Allocation       float64 `gorm:"not null;default:0"`
	Cost             int64   `gorm:"not null;default:0"`
	VarianceShare    float64 `gorm:"not null;default:0"`
}

func (samplingStratumRow) TableName() string { return "sampling_strata" }

// storedRep is a representative as its stratum's JSON holds it.
type storedRep struct {
	Launch       int      `json:"l"`
	KernelID     int      `json:"k"`
	Context      *string  `json:"c,omitempty"`
	Weight       float64  `json:"w"`
	DurationNs   *float64 `json:"d,omitempty"`
	Instructions int64    `json:"i"`
	Warmup       [][2]int `json:"u,omitempty"` // launch, kernel id
}

// stratumInsertBatch is how many strata one INSERT holds: 20 columns
// each, far below either database's limit on bound parameters.
const stratumInsertBatch = 200

// CreateSamplingPlan stores p, which has its ID, and its strata, in one
// write transaction, assigning its Seq and CreatedAt. A trace that is
// not there is a NOT_FOUND error.
func (d *DB) CreateSamplingPlan(ctx context.Context, p *cascade.SamplingPlan) error {
	rows := make([]samplingStratumRow, len(p.Strata))
	for i := range p.Strata {
		r, err := stratumRow(p.ID, i, &p.Strata[i])
		if err != nil {
			return fmt.Errorf("store sampling plan: stratum %d: %w", i, err)
		}
		rows[i] = r
	}
	return d.write(ctx, func(tx *gorm.DB) error {
		if err := lockTraces(tx); err != nil {
			return err
		}
		var n int64
		if err := tx.Model(&cascade.Trace{}).Where("id = ?", p.TraceID).Count(&n).Error; err != nil {
			return fmt.Errorf("look up trace %s: %w", p.TraceID, err)
		}
		if n == 0 {
			return cascade.Errorf(cascade.ENOTFOUND, "trace %q not found", p.TraceID)
		}
		if err := tx.Model(&cascade.SamplingPlan{}).Select("COALESCE(MAX(seq), 0) + 1").Scan(&p.Seq).Error; err != nil {
			return fmt.Errorf("next sampling plan seq: %w", err)
		}
		p.CreatedAt = tx.NowFunc()
		if err := tx.Create(p).Error; err != nil {
			return fmt.Errorf("insert sampling plan: %w", err)
		}
		if len(rows) == 0 {
			return nil
		}
		if err := tx.CreateInBatches(rows, stratumInsertBatch).Error; err != nil {
			return fmt.Errorf("insert sampling strata: %w", err)
		}
		return nil
	})
}

// SamplingPlan returns the plan with the given id, without its strata
// (SamplingStrata reads them), or a NOT_FOUND error.
func (d *DB) SamplingPlan(ctx context.Context, id string) (cascade.SamplingPlan, error) {
	var p cascade.SamplingPlan
	err := d.read(ctx).Take(&p, "id = ?", id).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return p, cascade.Errorf(cascade.ENOTFOUND, "sampling plan %q not found", id)
	}
	return p, err
}

// SamplingPlans returns the plans of the trace with the given id, newest
// first, without their strata.
func (d *DB) SamplingPlans(ctx context.Context, traceID string) ([]cascade.SamplingPlan, error) {
	ps := []cascade.SamplingPlan{}
	err := d.read(ctx).Where("trace_id = ?", traceID).Order("seq DESC").Find(&ps).Error
	return ps, err
}

// SamplingStrata returns the strata of the plan with the given id, in
// plan order, members and representatives decoded; none for a plan that
// is not there.
func (d *DB) SamplingStrata(ctx context.Context, planID string) ([]cascade.SamplingStratum, error) {
	var rows []samplingStratumRow
	if err := d.read(ctx).Where("plan_id = ?", planID).Order("idx").Find(&rows).Error; err != nil {
		return nil, err
	}
	out := make([]cascade.SamplingStratum, len(rows))
	for i := range rows {
		s, err := rows[i].stratum()
		if err != nil {
			return nil, fmt.Errorf("sampling plan %s: stratum %d: %w", planID, rows[i].Idx, err)
		}
		out[i] = s
	}
	return out, nil
}

// deleteSamplingPlans removes the plans of a trace and their strata, in tx.
func deleteSamplingPlans(tx *gorm.DB, traceID string) error {
	ids := tx.Model(&cascade.SamplingPlan{}).Select("id").Where("trace_id = ?", traceID)
	if err := tx.Where("plan_id IN (?)", ids).Delete(&samplingStratumRow{}).Error; err != nil {
		return fmt.Errorf("delete sampling strata of %s: %w", traceID, err)
	}
	if err := tx.Where("trace_id = ?", traceID).Delete(&cascade.SamplingPlan{}).Error; err != nil {
		return fmt.Errorf("delete sampling plans of %s: %w", traceID, err)
	}
	return nil
}

func stratumRow(planID string, idx int, s *cascade.SamplingStratum) (samplingStratumRow, error) {
	r := samplingStratumRow{
		PlanID: planID, Idx: idx, Name: s.Name, Size: s.Size,
		MeanDurationNs: s.MeanDurationNs, CVDuration: s.CVDuration,
		MeanInstructions: s.MeanInstructions, CVInstructions: s.CVInstructions,
		Why: string(s.Why), Allocation: s.Allocation, Cost: s.Cost, VarianceShare: s.VarianceShare,
	}
	if g := s.Grid; g != nil {
		r.GridX, r.GridY, r.GridZ = &g.X, &g.Y, &g.Z
	}
	if b := s.Block; b != nil {
		r.BlockX, r.BlockY, r.BlockZ = &b.X, &b.Y, &b.Z
	}
	var err error
	if r.Members, err = encodeMembers(s.Members); err != nil {
		return r, err
	}
	reps := make([]storedRep, len(s.Representatives))
	for i, rep := range s.Representatives {
		sr := storedRep{Launch: rep.Launch, KernelID: rep.KernelID, Context: rep.Context, Weight: rep.Weight,
			DurationNs: rep.DurationNs, Instructions: rep.Instructions}
		for _, w := range rep.Warmup {
			sr.Warmup = append(sr.Warmup, [2]int{w.Launch, w.KernelID})
		}
		reps[i] = sr
	}
	r.Representatives, err = json.Marshal(reps)
	return r, err
}

func (r *samplingStratumRow) stratum() (cascade.SamplingStratum, error) {
	s := cascade.SamplingStratum{
		Name: r.Name, Size: r.Size, MeanDurationNs: r.MeanDurationNs, CVDuration: r.CVDuration,
		MeanInstructions: r.MeanInstructions, CVInstructions: r.CVInstructions,
		Why: cascade.SamplingAllocation(r.Why), Allocation: r.Allocation, Cost: r.Cost, VarianceShare: r.VarianceShare,
	}
	if r.GridX != nil && r.GridY != nil && r.GridZ != nil {
		s.Grid = &cascade.Dim3{X: *r.GridX, Y: *r.GridY, Z: *r.GridZ}
	}
	if r.BlockX != nil && r.BlockY != nil && r.BlockZ != nil {
		s.Block = &cascade.Dim3{X: *r.BlockX, Y: *r.BlockY, Z: *r.BlockZ}
	}
	var err error
	if s.Members, err = decodeMembers(r.Members, r.Size); err != nil {
		return s, err
	}
	var reps []storedRep
	if err := json.Unmarshal(r.Representatives, &reps); err != nil {
		return s, fmt.Errorf("representatives: %w", err)
	}
	s.Representatives = make([]cascade.SamplingRepresentative, len(reps))
	for i, sr := range reps {
		rep := cascade.SamplingRepresentative{Launch: sr.Launch, KernelID: sr.KernelID, Context: sr.Context,
			Weight: sr.Weight, DurationNs: sr.DurationNs, Instructions: sr.Instructions,
			Warmup: make([]cascade.SamplingLaunch, len(sr.Warmup))}
		for k, w := range sr.Warmup {
			rep.Warmup[k] = cascade.SamplingLaunch{Launch: w[0], KernelID: w[1]}
		}
		s.Representatives[i] = rep
	}
	return s, nil
}

// encodeMembers encodes ascending launch positions as the first one and
// then each one's distance from the one before, as uvarints.
func encodeMembers(members []int32) ([]byte, error) {
	b := make([]byte, 0, len(members)+8)
	prev := int32(0)
	for i, m := range members {
		if m < 0 || i > 0 && m <= prev {
			return nil, fmt.Errorf("members: %d after %d: not ascending positions", m, prev)
		}
		b = binary.AppendUvarint(b, uint64(m-prev))
		prev = m
	}
	return b, nil
}

// decodeMembers reads what encodeMembers wrote: n positions.
func decodeMembers(b []byte, n int) ([]int32, error) {
	out := make([]int32, 0, n)
	prev := uint64(0)
	for len(b) > 0 {
		d, k := binary.Uvarint(b)
		if k <= 0 || prev+d > 1<<31-1 || d == 0 && len(out) > 0 {
			return nil, errors.New("members: a corrupt encoding")
		}
		prev += d
		out = append(out, int32(prev))
		b = b[k:]
	}
	if len(out) != n {
		return nil, fmt.Errorf("members: %d encoded, size %d", len(out), n)
	}
	return out, nil
}
