/* SPDX-License-Identifier: MIT */
/* The attestation key: created under the EK, saved as blobs in the state directory and loaded
 * again; credential activation with it (enrolment, docs/architecture.md §3.1). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <tss2/tss2_mu.h>

#include "tpm/tpm-internal.h"
#include "util/file.h"
#include "evidence/quote.h"

#define AK_FILE_MAX 4096 /* a marshalled TPM2B_PUBLIC / TPM2B_PRIVATE is far smaller */

static void closep(int *fd)
{
        if (*fd >= 0)
                close(*fd);
}

/* --- AK ------------------------------------------------------------------------------------ */

/* Restricted signing key: RSA-2048 RSASSA-SHA256 or ECC P-256 ECDSA-SHA256 (architecture §5.3). */
static void ak_template(enum tpm_key_alg alg, TPM2B_PUBLIC *ret)
{
        TPMT_PUBLIC *p = &ret->publicArea;

        memset(ret, 0, sizeof(*ret));
        p->nameAlg = TPM2_ALG_SHA256;
        p->objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT |
                              TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_USERWITHAUTH |
                              TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_SIGN_ENCRYPT;
        if (alg == TPM_KEY_RSA2048) {
                TPMS_RSA_PARMS *r = &p->parameters.rsaDetail;

                p->type = TPM2_ALG_RSA;
                r->symmetric.algorithm = TPM2_ALG_NULL;
                r->scheme.scheme = TPM2_ALG_RSASSA;
                r->scheme.details.rsassa.hashAlg = TPM2_ALG_SHA256;
                r->keyBits = 2048;
                r->exponent = 0;
        } else {
                TPMS_ECC_PARMS *e = &p->parameters.eccDetail;

                p->type = TPM2_ALG_ECC;
                e->symmetric.algorithm = TPM2_ALG_NULL;
                e->scheme.scheme = TPM2_ALG_ECDSA;
                e->scheme.details.ecdsa.hashAlg = TPM2_ALG_SHA256;
                e->curveID = TPM2_ECC_NIST_P256;
                e->kdf.scheme = TPM2_ALG_NULL;
        }
}

/* Does a loaded-from-disk public area have the AK template's type, attributes and scheme? */
static bool ak_matches_template(const TPM2B_PUBLIC *pub, enum tpm_key_alg alg)
{
        const TPMT_PUBLIC *p = &pub->publicArea;
        TPM2B_PUBLIC want;
        const TPMT_PUBLIC *w = &want.publicArea;

        ak_template(alg, &want);
        if (p->type != w->type || p->nameAlg != w->nameAlg ||
            p->objectAttributes != w->objectAttributes || p->authPolicy.size != 0)
                return false;
        if (alg == TPM_KEY_RSA2048)
                return p->parameters.rsaDetail.symmetric.algorithm == TPM2_ALG_NULL &&
                       p->parameters.rsaDetail.scheme.scheme == TPM2_ALG_RSASSA &&
                       p->parameters.rsaDetail.scheme.details.rsassa.hashAlg == TPM2_ALG_SHA256 &&
                       p->parameters.rsaDetail.keyBits == 2048 && p->unique.rsa.size == 256;
        return p->parameters.eccDetail.symmetric.algorithm == TPM2_ALG_NULL &&
               p->parameters.eccDetail.scheme.scheme == TPM2_ALG_ECDSA &&
               p->parameters.eccDetail.scheme.details.ecdsa.hashAlg == TPM2_ALG_SHA256 &&
               p->parameters.eccDetail.curveID == TPM2_ECC_NIST_P256 &&
               p->unique.ecc.x.size == 32 && p->unique.ecc.y.size == 32;
}

/* A policy session satisfying the EK's policy: TPM2_StartAuthSession (Part 3, 11.1) then
 * TPM2_PolicySecret(TPM_RH_ENDORSEMENT) (Part 3, 23.4). */
static int ek_policy_session(struct tpm *t, ESYS_TR *ret, struct attest_err *err)
{
        struct tpm_tr s _cleanup_(tpm_tr_flushp) = {t->esys, ESYS_TR_NONE};
        TPMT_SYM_DEF sym = {.algorithm = TPM2_ALG_NULL};
        TSS2_RC rc;

        rc = Esys_StartAuthSession(t->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
                                   ESYS_TR_NONE, NULL, TPM2_SE_POLICY, &sym, TPM2_ALG_SHA256, &s.h);
        if (rc != TSS2_RC_SUCCESS)
                return tpm_fail(err, rc, -EIO, AE_NONE, "starting the EK policy session");
        rc = Esys_PolicySecret(t->esys, ESYS_TR_RH_ENDORSEMENT, s.h, ESYS_TR_PASSWORD, ESYS_TR_NONE,
                               ESYS_TR_NONE, NULL, NULL, NULL, 0, NULL, NULL);
        if (rc != TSS2_RC_SUCCESS)
                return tpm_fail(err, rc, -EIO, AE_NONE, "PolicySecret(TPM_RH_ENDORSEMENT)");
        *ret = s.h;
        s.h = ESYS_TR_NONE;
        return 0;
}

/* TPM2_Create (Part 3, 12.1) of a new AK under the EK. */
static int ak_create(struct tpm *t, ESYS_TR ek, enum tpm_key_alg alg, TPM2B_PUBLIC *ret_pub,
                     TPM2B_PRIVATE *ret_priv, struct attest_err *err)
{
        struct tpm_tr s _cleanup_(tpm_tr_flushp) = {t->esys, ESYS_TR_NONE};
        _cleanup_(tpm_esys_freep) TPM2B_PUBLIC *pub = NULL;
        _cleanup_(tpm_esys_freep) TPM2B_PRIVATE *priv = NULL;
        TPM2B_SENSITIVE_CREATE sens = {0};
        TPM2B_DATA outside = {0};
        TPML_PCR_SELECTION creation_pcr = {0};
        TPM2B_PUBLIC in;
        TSS2_RC rc;
        int r;

        r = ek_policy_session(t, &s.h, err);
        if (r < 0)
                return r;
        ak_template(alg, &in);
        rc = Esys_Create(t->esys, ek, s.h, ESYS_TR_NONE, ESYS_TR_NONE, &sens, &in, &outside,
                         &creation_pcr, &priv, &pub, NULL, NULL, NULL);
        if (rc != TSS2_RC_SUCCESS)
                return tpm_fail(err, rc, -EIO, AE_NONE, "creating the %s AK",
                                tpm_key_alg_name(alg));
        *ret_pub = *pub;
        *ret_priv = *priv;
        return 0;
}

/* TPM2_Load (Part 3, 12.2) of the AK under the EK. A TPM refusal means the blobs do not belong to
 * this TPM's EK or were altered: -EBADMSG. */
static int ak_load(struct tpm *t, ESYS_TR ek, const TPM2B_PUBLIC *pub, const TPM2B_PRIVATE *priv,
                   ESYS_TR *ret, struct attest_err *err)
{
        struct tpm_tr s _cleanup_(tpm_tr_flushp) = {t->esys, ESYS_TR_NONE};
        TSS2_RC rc;
        int r;

        r = ek_policy_session(t, &s.h, err);
        if (r < 0)
                return r;
        rc = Esys_Load(t->esys, ek, s.h, ESYS_TR_NONE, ESYS_TR_NONE, priv, pub, ret);
        if (rc != TSS2_RC_SUCCESS) {
                return tpm_fail(err, rc, -EBADMSG, AE_TPM_AK_REJECTED,
                                "the TPM refused to load the AK (altered, or made by another TPM)");
        }
        return 0;
}

/* Read a whole regular file name under dirfd (util/file.h), at most max bytes. -ENOENT when
 * absent. */
static int read_at(int dirfd, const char *name, size_t max, uint8_t *buf, size_t *ret_len)
{
        int fd _cleanup_(closep) = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

        if (fd < 0)
                return -errno;
        return file_read_fd(fd, name, buf, max, 0, ret_len, NULL);
}

/* Open (creating it 0700 when absent) the state directory; refuse one that is not ours or that
 * others may use: whoever can write there can swap the AK. */
static int state_dir_open(const char *dir, struct attest_err *err)
{
        struct stat st;
        int fd, e;

        if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
                e = errno;
                return attest_fail(err, -e, AE_TPM_STATE_DIR, "cannot create %s: %s", dir,
                                   strerror(e));
        }
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
                e = errno;
                return attest_fail(err, -e, AE_TPM_STATE_DIR, "cannot open %s: %s", dir,
                                   strerror(e));
        }
        if (fstat(fd, &st) < 0) {
                e = errno;
                close(fd);
                return attest_fail(err, -e, AE_TPM_STATE_DIR, "cannot stat %s: %s", dir,
                                   strerror(e));
        }
        if ((st.st_mode & 0077) || st.st_uid != geteuid()) {
                close(fd);
                return attest_fail(err, -EINVAL, AE_TPM_STATE_DIR,
                                   "%s (mode %04o, uid %u) must be 0700 and owned by uid %u", dir,
                                   (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid,
                                   (unsigned)geteuid());
        }
        return fd;
}

static void ak_names(enum tpm_key_alg alg, const char **ret_pub, const char **ret_priv)
{
        *ret_pub = alg == TPM_KEY_ECCP256 ? TPM_AK_PUB_ECC : TPM_AK_PUB_RSA;
        *ret_priv = alg == TPM_KEY_ECCP256 ? TPM_AK_PRIV_ECC : TPM_AK_PRIV_RSA;
}

/* Load the saved AK files of alg: both unmarshal exactly, and the public matches the template. */
static int ak_files_read(int dirfd, const char *dir, enum tpm_key_alg alg, TPM2B_PUBLIC *ret_pub,
                         TPM2B_PRIVATE *ret_priv, struct attest_err *err)
{
        const char *pub_name, *priv_name;
        uint8_t buf[AK_FILE_MAX];
        TPM2B_PUBLIC pub = {0};
        TPM2B_PRIVATE priv = {0};
        size_t len, off = 0;
        TSS2_RC rc;
        int r;

        ak_names(alg, &pub_name, &priv_name);
        r = read_at(dirfd, pub_name, sizeof(buf), buf, &len);
        if (r < 0)
                return attest_fail(err, r == -ENOENT ? -ENOENT : -EBADMSG, AE_TPM_AK_UNREADABLE,
                                   "%s/%s: %s", dir, pub_name, strerror(-r));
        rc = Tss2_MU_TPM2B_PUBLIC_Unmarshal(buf, len, &off, &pub);
        if (rc != TSS2_RC_SUCCESS)
                return tpm_fail(err, rc, -EBADMSG, AE_TPM_AK_CORRUPT,
                                "%s/%s: not a marshalled TPM2B_PUBLIC (%zu bytes)", dir, pub_name,
                                len);
        if (off != len)
                return attest_fail(err, -EBADMSG, AE_TPM_AK_CORRUPT,
                                   "%s/%s: %zu bytes after the TPM2B_PUBLIC", dir, pub_name,
                                   len - off);
        if (!ak_matches_template(&pub, alg))
                return attest_fail(err, -EBADMSG, AE_TPM_AK_CORRUPT,
                                   "%s/%s: not a %s AK (type, attributes or scheme differ)", dir,
                                   pub_name, tpm_key_alg_name(alg));
        off = 0;
        r = read_at(dirfd, priv_name, sizeof(buf), buf, &len);
        if (r < 0)
                return attest_fail(err, r == -ENOENT ? -ENOENT : -EBADMSG, AE_TPM_AK_UNREADABLE,
                                   "%s/%s: %s", dir, priv_name, strerror(-r));
        rc = Tss2_MU_TPM2B_PRIVATE_Unmarshal(buf, len, &off, &priv);
        if (rc != TSS2_RC_SUCCESS)
                return tpm_fail(err, rc, -EBADMSG, AE_TPM_AK_CORRUPT,
                                "%s/%s: not a marshalled TPM2B_PRIVATE (%zu bytes)", dir, priv_name,
                                len);
        if (off != len)
                return attest_fail(err, -EBADMSG, AE_TPM_AK_CORRUPT,
                                   "%s/%s: %zu bytes after the TPM2B_PRIVATE", dir, priv_name,
                                   len - off);
        *ret_pub = pub;
        *ret_priv = priv;
        return 0;
}

static int ak_files_write(int dirfd, const char *dir, enum tpm_key_alg alg, const TPM2B_PUBLIC *pub,
                          const TPM2B_PRIVATE *priv, struct attest_err *err)
{
        const char *pub_name, *priv_name;
        uint8_t buf[sizeof(TPM2B_PUBLIC) + sizeof(TPM2B_PRIVATE)];
        struct file_bytes bytes;
        size_t off = 0;
        TSS2_RC rc;
        int r;

        ak_names(alg, &pub_name, &priv_name);
        rc = Tss2_MU_TPM2B_PRIVATE_Marshal(priv, buf, sizeof(buf), &off);
        if (rc != TSS2_RC_SUCCESS)
                return tpm_fail(err, rc, -EINVAL, AE_NONE, "marshalling the AK private");
        /* The private first: a crash in between leaves a pub-less state that load reports. */
        bytes = FILE_BYTES(buf, off);
        r = file_write_atomic_at(dirfd, priv_name, 0600, file_bytes_read, &bytes, NULL);
        if (r < 0)
                return attest_fail(err, r, AE_TPM_STATE_WRITE, "%s/%s: %s", dir, priv_name,
                                   strerror(-r));
        off = 0;
        rc = Tss2_MU_TPM2B_PUBLIC_Marshal(pub, buf, sizeof(buf), &off);
        if (rc != TSS2_RC_SUCCESS)
                return tpm_fail(err, rc, -EINVAL, AE_NONE, "marshalling the AK public");
        bytes = FILE_BYTES(buf, off);
        r = file_write_atomic_at(dirfd, pub_name, 0600, file_bytes_read, &bytes, NULL);
        if (r < 0)
                return attest_fail(err, r, AE_TPM_STATE_WRITE, "%s/%s: %s", dir, pub_name,
                                   strerror(-r));
        return 0;
}

/* Which of the two AK files exist: bit 0 the public, bit 1 the private. */
static int ak_files_present(int dirfd, enum tpm_key_alg alg)
{
        const char *pub_name, *priv_name;
        int m = 0;

        ak_names(alg, &pub_name, &priv_name);
        if (faccessat(dirfd, pub_name, F_OK, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
                m |= 1;
        if (faccessat(dirfd, priv_name, F_OK, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
                m |= 2;
        return m;
}

/* The AK as quote_verify() takes it, so the agent checks its quotes as the verifier will. */
static int ak_verifier_view(const TPM2B_PUBLIC *pub, struct quote_ak **ret, struct attest_err *err)
{
        _cleanup_free_ uint8_t *buf = NULL;
        size_t len;
        int r;

        if ((r = tpm_public_marshal(pub, &buf, &len)) < 0)
                return attest_fail(err, r, AE_TPM_ERROR, "cannot marshal the AK public area");
        if ((r = quote_ak_parse(buf, len, ret, err)) < 0)
                attest_err_prefix(err, "the AK does not pass the verifier's checks");
        return r;
}

int tpm_ak_load_or_create(struct tpm *t, const char *state_dir, enum tpm_key_alg alg,
                          struct attest_err *err)
{
        struct tpm_tr ek _cleanup_(tpm_tr_flushp) = {t->esys, ESYS_TR_NONE};
        int dirfd _cleanup_(closep) = -1;
        const char *pub_name, *priv_name;
        TPM2B_PUBLIC pub;
        TPM2B_PRIVATE priv;
        ESYS_TR ak = ESYS_TR_NONE;
        struct quote_ak *q = NULL;
        int r, present = 0;

        if (!tpm_alg_valid(alg))
                return attest_fail(err, -EINVAL, AE_TPM_BAD_ALG, "unknown key algorithm %d", alg);
        ak_names(alg, &pub_name, &priv_name);
        if (state_dir) {
                dirfd = state_dir_open(state_dir, err);
                if (dirfd < 0)
                        return dirfd;
                present = ak_files_present(dirfd, alg);
                if (present == 1 || present == 2)
                        return attest_fail(err, -EBADMSG, AE_TPM_AK_INCOMPLETE,
                                           "%s/%s exists but %s/%s is missing; not creating a "
                                           "new AK over it",
                                           state_dir, present == 1 ? pub_name : priv_name,
                                           state_dir, present == 1 ? priv_name : pub_name);
                if (present == 3) {
                        r = ak_files_read(dirfd, state_dir, alg, &pub, &priv, err);
                        if (r < 0)
                                return r;
                }
        }
        r = tpm_ek_create(t, alg, &ek.h, err);
        if (r < 0)
                return r;
        if (present == 3) {
                r = ak_load(t, ek.h, &pub, &priv, &ak, err);
                if (r < 0) {
                        attest_err_prefix(err, "%s/%s and %s", state_dir, pub_name, priv_name);
                        return r;
                }
        } else {
                r = ak_create(t, ek.h, alg, &pub, &priv, err);
                if (r < 0)
                        return r;
                if (state_dir) {
                        r = ak_files_write(dirfd, state_dir, alg, &pub, &priv, err);
                        if (r < 0)
                                return r;
                }
                r = ak_load(t, ek.h, &pub, &priv, &ak, err);
                if (r < 0)
                        return r;
        }
        OPENSSL_cleanse(&priv, sizeof(priv));
        r = ak_verifier_view(&pub, &q, err);
        if (r < 0) {
                (void)Esys_FlushContext(t->esys, ak);
                return r;
        }
        if (t->ak != ESYS_TR_NONE)
                (void)Esys_FlushContext(t->esys, t->ak);
        quote_ak_free(t->ak_q);
        t->ak = ak;
        t->ak_alg = alg;
        t->ak_pub = pub;
        t->ak_q = q;
        return 0;
}

int tpm_ak_public(struct tpm *t, uint8_t **ret_tpm2b_public, size_t *ret_len)
{
        if (t->ak == ESYS_TR_NONE)
                return -ENOENT;
        return tpm_public_marshal(&t->ak_pub, ret_tpm2b_public, ret_len);
}

/* --- Credential activation ---------------------------------------------------------------- */

int tpm_activate_credential(struct tpm *t, const uint8_t *blob, size_t blob_len,
                            const uint8_t *secret, size_t secret_len, uint8_t *ret_cred,
                            size_t *ret_len, struct attest_err *err)
{
        struct tpm_tr ek _cleanup_(tpm_tr_flushp) = {t->esys, ESYS_TR_NONE};
        struct tpm_tr s _cleanup_(tpm_tr_flushp) = {t->esys, ESYS_TR_NONE};
        _cleanup_(tpm_esys_freep) TPM2B_DIGEST *cred = NULL;
        TPM2B_ID_OBJECT id = {0};
        TPM2B_ENCRYPTED_SECRET enc = {0};
        size_t off = 0;
        TSS2_RC rc;
        int r;

        if (t->ak == ESYS_TR_NONE)
                return attest_fail(err, -EINVAL, AE_TPM_NO_AK, "no AK loaded");
        rc = Tss2_MU_TPM2B_ID_OBJECT_Unmarshal(blob, blob_len, &off, &id);
        if (rc != TSS2_RC_SUCCESS)
                return tpm_fail(err, rc, -EBADMSG, AE_TPM_BAD_CREDENTIAL,
                                "credential blob (%zu bytes) is not a TPM2B_ID_OBJECT", blob_len);
        if (off != blob_len)
                return attest_fail(err, -EBADMSG, AE_TPM_BAD_CREDENTIAL,
                                   "%zu bytes after the TPM2B_ID_OBJECT", blob_len - off);
        off = 0;
        rc = Tss2_MU_TPM2B_ENCRYPTED_SECRET_Unmarshal(secret, secret_len, &off, &enc);
        if (rc != TSS2_RC_SUCCESS)
                return tpm_fail(err, rc, -EBADMSG, AE_TPM_BAD_CREDENTIAL,
                                "secret (%zu bytes) is not a TPM2B_ENCRYPTED_SECRET", secret_len);
        if (off != secret_len)
                return attest_fail(err, -EBADMSG, AE_TPM_BAD_CREDENTIAL,
                                   "%zu bytes after the TPM2B_ENCRYPTED_SECRET", secret_len - off);
        r = tpm_ek_create(t, t->ak_alg, &ek.h, err);
        if (r < 0)
                return r;
        r = ek_policy_session(t, &s.h, err);
        if (r < 0)
                return r;
        /* TPM2_ActivateCredential (Part 3, 12.5): the AK (ADMIN role; adminWithPolicy clear, so
         * its empty authValue) and the EK (USER role; its policy) */
        rc = Esys_ActivateCredential(t->esys, t->ak, ek.h, ESYS_TR_PASSWORD, s.h, ESYS_TR_NONE, &id,
                                     &enc, &cred);
        if (rc != TSS2_RC_SUCCESS) {
                return tpm_fail(err, rc, -EKEYREJECTED, AE_TPM_CREDENTIAL_REJECTED,
                                "ActivateCredential");
        }
        if (cred->size > TPM_CRED_MAX)
                return attest_fail(err, -EIO, AE_TPM_BAD_RESPONSE, "credential of %u bytes",
                                   cred->size);
        memcpy(ret_cred, cred->buffer, cred->size);
        *ret_len = cred->size;
        OPENSSL_cleanse(cred->buffer, cred->size);
        return 0;
}

/* --- Quote --------------------------------------------------------------------------------- */
