module github.com/cascade-sim/cascade

go 1.26.0

require (
	github.com/99designs/gqlgen v0.17.98
	github.com/fsnotify/fsnotify v1.10.1
	github.com/glebarez/sqlite v1.11.0
	github.com/gorilla/websocket v1.5.3
	github.com/ianlancetaylor/demangle v0.0.0-20260724033716-83e58baca724
	github.com/klauspost/compress v1.20.4
	github.com/ulikunitz/xz v0.5.17
	github.com/vektah/gqlparser/v2 v2.5.64
	golang.org/x/term v0.48.0
	gorm.io/driver/postgres v1.6.3
	gorm.io/gorm v1.31.2
	mvdan.cc/sh/v3 v3.14.1
)

require (
	github.com/agnivade/levenshtein v1.2.2 // indirect
	github.com/coder/websocket v1.8.15 // indirect
	github.com/dustin/go-humanize v1.0.1 // indirect
	github.com/glebarez/go-sqlite v1.21.2 // indirect
	github.com/go-viper/mapstructure/v2 v2.5.0 // indirect
	github.com/goccy/go-yaml v1.19.2 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/hashicorp/golang-lru/v2 v2.0.7 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/pgx/v5 v5.10.0 // indirect
	github.com/jackc/puddle/v2 v2.2.2 // indirect
	github.com/jinzhu/inflection v1.0.0 // indirect
	github.com/jinzhu/now v1.1.5 // indirect
	github.com/mattn/go-isatty v0.0.24 // indirect
	github.com/remyoudompheng/bigfft v0.0.0-20230129092748-24d4a6f8daec // indirect
	github.com/sosodev/duration v1.4.0 // indirect
	github.com/urfave/cli/v3 v3.14.0 // indirect
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/sync v0.25.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	golang.org/x/tools v0.52.0 // indirect
	modernc.org/libc v1.22.5 // indirect
	modernc.org/mathutil v1.5.0 // indirect
	modernc.org/memory v1.5.0 // indirect
	modernc.org/sqlite v1.23.1 // indirect
)

tool github.com/99designs/gqlgen
