package slurmexec

import "syscall"

// fsType names the filesystem holding path and says whether the compute
// nodes of a cluster can see it: shared ("nfs", "lustre"), local to this
// machine ("ext4"), or memory only ("tmpfs"); "" and an error when statfs
// fails, and the magic number for one it does not know.
func fsType(path string) (name string, kind fsKind, err error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return "", fsUnknown, err
	}
	if f, ok := fsMagic[int64(st.Type)&0xffffffff]; ok {
		return f.name, f.kind, nil
	}
	return fmtMagic(int64(st.Type)), fsUnknown, nil
}

var fsMagic = map[int64]struct {
	name string
	kind fsKind
}{
	0x6969:     {"nfs", fsShared},
	0x0bd00bd0: {"lustre", fsShared},
	0x47504653: {"gpfs", fsShared},
	0x00c36400: {"cephfs", fsShared},
	0x19830326: {"beegfs", fsShared},
	0xff534d42: {"cifs", fsShared},
	0xfe534d42: {"smb2", fsShared},
	0x517b:     {"smb", fsShared},
	0x5346414f: {"afs", fsShared},
	0xaad7aaea: {"panfs", fsShared},
	0x01161970: {"gfs2", fsShared},
	0x7461636f: {"ocfs2", fsShared},
	0x01021994: {"tmpfs", fsMemory},
	0x858458f6: {"ramfs", fsMemory},
	0x794c7630: {"overlayfs", fsMemory}, // a container's own root: no node sees it
	0xef53:     {"ext4", fsLocal},
	0x58465342: {"xfs", fsLocal},
	0x9123683e: {"btrfs", fsLocal},
	0x2fc12fc1: {"zfs", fsLocal},
	0xf2f52010: {"f2fs", fsLocal},
	0x65735546: {"fuse", fsUnknown},
	0x01021997: {"9p", fsUnknown},
}
