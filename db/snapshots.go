package db

// The schema snapshots of migrations from version 14 on (see migrations).

// Schema snapshots, version 14.

type traceV14 struct {
	ID           string   `gorm:"primaryKey"`
	UploadSum    string   `gorm:"not null;default:''"`
	ScanWarnings []string `gorm:"serializer:json"`
}

func (traceV14) TableName() string { return "traces" }
