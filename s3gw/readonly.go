package s3gw

import (
	"context"
	"encoding/json"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/versity/versitygw/auth"
)

// The read-only key pair is a second gateway account, of the plain user
// role, whom the bucket's ACL grants READ: the gateway then lets it get,
// head and list (every action it checks against READ) and refuses it every
// write, multipart upload, copy, delete and ACL or policy change with
// AccessDenied, by its own access checks. The grant is added when the
// gateway reads the ACL, not stored: changing or dropping the read-only
// pair takes effect at the next start, and the bucket's stored ACL stays
// the owner's alone.

// accounts is the gateway's IAM: the read-write pair as its root account,
// and the read-only pair when there is one. It answers a request signed
// with an unknown access key with S3's InvalidAccessKeyId rather than the
// gateway's admin-API error.
type accounts struct {
	auth.IAMService // the root account alone
	readOnly        *auth.Account
}

func (a accounts) GetUserAccount(access string) (auth.Account, error) {
	if a.readOnly != nil && access == a.readOnly.Access {
		return *a.readOnly, nil
	}
	acct, err := a.IAMService.GetUserAccount(access)
	if err != nil {
		return acct, auth.ErrNoSuchUser
	}
	return acct, nil
}

// ResolveAccounts returns those of keys that name no account.
func (a accounts) ResolveAccounts(keys []string) ([]string, error) {
	missing := []string{}
	for _, k := range keys {
		if _, err := a.GetUserAccount(k); err != nil {
			missing = append(missing, k)
		}
	}
	return missing, nil
}

// GetBucketAcl is the stored ACL with READ granted to the read-only
// account, when there is one.
func (g keyGuard) GetBucketAcl(ctx context.Context, in *s3.GetBucketAclInput) ([]byte, error) {
	data, err := g.Posix.GetBucketAcl(ctx, in)
	if err != nil || g.readOnly == "" {
		return data, err
	}
	acl, err := auth.ParseACL(data)
	if err != nil {
		return nil, err
	}
	acl.Grantees = append(acl.Grantees, auth.Grantee{Access: g.readOnly, Permission: auth.PermissionRead, Type: types.TypeCanonicalUser})
	return json.Marshal(acl)
}
