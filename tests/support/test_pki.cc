// SPDX-License-Identifier: Apache-2.0
#include "tests/support/test_pki.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>

namespace faultline {
namespace {

struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct CertFree {
  void operator()(X509* c) const { X509_free(c); }
};
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;
using Cert = std::unique_ptr<X509, CertFree>;

Status OpenSslError(const char* what) {
  char buf[256] = {0};
  ERR_error_string_n(ERR_get_error(), buf, sizeof(buf));
  return InternalError(std::string(what) + ": " + buf);
}

bool AddExt(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr) return false;
  const bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

Result<Cert> MakeCert(EVP_PKEY* key, const char* cn, X509* issuer, EVP_PKEY* issuer_key, bool is_ca,
                      const char* san, const char* eku) {
  Cert cert(X509_new());
  if (!cert) return OpenSslError("X509_new");
  X509_set_version(cert.get(), 2);
  unsigned char serial[16];
  RAND_bytes(serial, sizeof(serial));
  serial[0] &= 0x7F;
  BIGNUM* bn = BN_bin2bn(serial, sizeof(serial), nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 24L * 3600);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("faultline tests"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn),
                             -1, -1, 0);
  X509* signer = issuer != nullptr ? issuer : cert.get();
  X509_set_issuer_name(cert.get(), X509_get_subject_name(signer));
  bool ok = true;
  if (is_ca) {
    ok = AddExt(cert.get(), signer, NID_basic_constraints, "critical,CA:TRUE") &&
         AddExt(cert.get(), signer, NID_key_usage, "critical,keyCertSign,cRLSign") &&
         AddExt(cert.get(), signer, NID_subject_key_identifier, "hash");
  } else {
    ok = AddExt(cert.get(), signer, NID_basic_constraints, "critical,CA:FALSE") &&
         AddExt(cert.get(), signer, NID_key_usage, "critical,digitalSignature,keyEncipherment") &&
         AddExt(cert.get(), signer, NID_ext_key_usage, eku) &&
         AddExt(cert.get(), signer, NID_authority_key_identifier, "keyid:always");
    if (ok && san != nullptr) ok = AddExt(cert.get(), signer, NID_subject_alt_name, san);
  }
  if (!ok) return OpenSslError("X509 extension");
  if (X509_sign(cert.get(), issuer_key != nullptr ? issuer_key : key, EVP_sha256()) == 0) {
    return OpenSslError("X509_sign");
  }
  return cert;
}

std::string CertPem(X509* cert) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(bio, cert);
  char* data = nullptr;
  long len = BIO_get_mem_data(bio, &data);  // NOLINT(google-runtime-int)
  std::string pem(data, static_cast<std::size_t>(len));
  BIO_free(bio);
  return pem;
}

std::string KeyPem(EVP_PKEY* key) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long len = BIO_get_mem_data(bio, &data);  // NOLINT(google-runtime-int)
  std::string pem(data, static_cast<std::size_t>(len));
  BIO_free(bio);
  return pem;
}

}  // namespace

Result<TestPki> GenerateTestPki(const std::string& client_common_name) {
  Key ca_key(EVP_EC_gen("P-256"));
  Key server_key(EVP_EC_gen("P-256"));
  Key client_key(EVP_EC_gen("P-256"));
  if (!ca_key || !server_key || !client_key) return OpenSslError("EVP_EC_gen");
  auto ca = MakeCert(ca_key.get(), "faultline test CA", nullptr, nullptr, true, nullptr, nullptr);
  if (!ca) return ca.error();
  auto server = MakeCert(server_key.get(), "fake-apiserver", ca->get(), ca_key.get(), false,
                         "IP:127.0.0.1,DNS:localhost", "serverAuth");
  if (!server) return server.error();
  auto client = MakeCert(client_key.get(), client_common_name.c_str(), ca->get(), ca_key.get(),
                         false, nullptr, "clientAuth");
  if (!client) return client.error();
  TestPki pki;
  pki.ca_cert_pem = CertPem(ca->get());
  pki.ca_key_pem = KeyPem(ca_key.get());
  pki.server_cert_pem = CertPem(server->get());
  pki.server_key_pem = KeyPem(server_key.get());
  pki.client_cert_pem = CertPem(client->get());
  pki.client_key_pem = KeyPem(client_key.get());
  return pki;
}

}  // namespace faultline
