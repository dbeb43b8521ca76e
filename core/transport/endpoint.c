/* Account hosts and endpoint kinds: which names are Azure Storage blob
 * endpoints, which are loopback, and which is the replay placeholder. */
#include "endpoint.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "url.h"

/* Azure Storage blob endpoint suffixes: the public cloud (private
 * endpoints are <account>.privatelink.blob.core.windows.net), Azure China,
 * Azure Government. */
static const char *const azure_suffixes[] = {
    ".blob.core.windows.net", ".blob.core.chinacloudapi.cn",
    ".blob.core.usgovcloudapi.net", NULL};

void ll_endpoint_server_key(const char *host, char *out, size_t cap) {
  char bare[256];
  ll_endpoint_bare_host(host, bare, sizeof bare);
  const char *h = host ? host : "", *end = h;
  if (h[0] == '[')
    end = strchr(h, ']') ? strchr(h, ']') + 1 : h + strlen(h);
  else
    end = h + strcspn(h, ":");
  const char *port = *end == ':' ? end + 1 : "";
  if (strcmp(port, "443") == 0 || strcmp(port, "80") == 0)
    port = "";
  /* "[loopback]" is no DNS name, so no host is taken for loopback */
  snprintf(out, cap, "%s%s%s",
           ll_endpoint_classify(bare) == LL_HOST_LOOPBACK ? "[loopback]" : bare,
           *port ? ":" : "", port);
}

int ll_endpoint_same_server(const char *a, const char *b) {
  char ka[300], kb[300];
  if (!a || !b)
    return 0;
  ll_endpoint_server_key(a, ka, sizeof ka);
  ll_endpoint_server_key(b, kb, sizeof kb);
  return strcmp(ka, kb) == 0;
}

int ll_endpoint_same_host(const char *a, const char *b) {
  return a && b && strcasecmp(a, b) == 0;
}

void ll_endpoint_bare_host(const char *host, char *out, size_t cap) {
  if (!cap)
    return;
  ll_strlcpy(out, host ? host : "", cap);
  if (out[0] == '[') {
    char *close = strchr(out, ']');
    if (close)
      close[1] = '\0';
  } else {
    out[strcspn(out, ":")] = '\0';
  }
  for (char *p = out; *p; p++)
    *p = (char)tolower((unsigned char)*p);
}

static int name_chars(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) ||
          s[i] == '-' || s[i] == '.'))
      return 0;
  return n > 0 && s[0] != '.' && s[0] != '-';
}

/* <account>.zNN.blob.storage.azure.net: Azure DNS zone endpoints. */
static int dns_zone_endpoint(const char *bare, size_t len) {
  static const char tail[] = ".blob.storage.azure.net";
  size_t tl = sizeof tail - 1;
  if (len < tl + 5 || strcmp(bare + len - tl, tail) != 0)
    return 0;
  const char *z = bare + len - tl - 4; /* ".zNN" */
  return z[0] == '.' && z[1] == 'z' && isdigit((unsigned char)z[2]) &&
         isdigit((unsigned char)z[3]) && name_chars(bare, (size_t)(z - bare));
}

static int azure_name(const char *bare) {
  size_t len = strlen(bare);
  for (const char *const *s = azure_suffixes; *s; s++) {
    size_t sl = strlen(*s);
    if (len > sl && strcmp(bare + len - sl, *s) == 0 &&
        name_chars(bare, len - sl))
      return 1;
  }
  return dns_zone_endpoint(bare, len);
}

ll_host_class ll_endpoint_classify(const char *bare) {
  if (!bare || !*bare)
    return LL_HOST_OTHER;
  if (strcmp(bare, LL_REPLAY_HOST) == 0)
    return LL_HOST_REPLAY;
  if (ll_url_host_loopback(bare))
    return LL_HOST_LOOPBACK;
  return azure_name(bare) ? LL_HOST_AZURE : LL_HOST_OTHER;
}

int ll_endpoint_declarable(const char *name) {
  char bare[256];
  size_t n = name ? strlen(name) : 0;
  if (n == 0 || n > 253)
    return 0;
  ll_endpoint_bare_host(name, bare, sizeof bare);
  /* a bare DNS name: no scheme, port, path or brackets, and a dot */
  return strcasecmp(bare, name) == 0 && name_chars(bare, n) &&
         strchr(bare, '.') && bare[n - 1] != '.' &&
         ll_endpoint_classify(bare) == LL_HOST_OTHER;
}

ll_status ll_endpoint_check(const char *kind, const char *account_host,
                            const char *label, const char *declared,
                            ll_error *err) {
  char bare[256];
  ll_endpoint_bare_host(account_host, bare, sizeof bare);
  ll_host_class c = ll_endpoint_classify(bare);
  if (declared && !ll_streq(kind, "azure"))
    return ll_fail(err, LL_E_MANIFEST,
                   "declared_azure_host %.200s is set but endpoint_kind is "
                   "%.20s: only an azure endpoint may be declared",
                   declared, kind ? kind : "(none)");
  if (ll_streq(kind, "azure")) {
    if (declared && !(ll_endpoint_declarable(declared) &&
                      strcmp(declared, bare) == 0 && c == LL_HOST_OTHER))
      return ll_fail(err, LL_E_MANIFEST,
                     "declared_azure_host %.200s is not the account host "
                     "%.200s, or is a name that cannot be declared (loopback, "
                     "the replay host, an Azure name, not a bare DNS name)",
                     declared, bare);
    if (c == LL_HOST_AZURE || declared)
      return LL_OK;
    return ll_fail(err, LL_E_MANIFEST,
                   "endpoint_kind is azure but account host %.200s is not an "
                   "Azure Storage blob host (<account>.blob.core.windows.net, "
                   ".blob.core.chinacloudapi.cn, .blob.core.usgovcloudapi.net "
                   "or .zNN.blob.storage.azure.net): if the operator knows it "
                   "is Azure (a custom domain, a private endpoint name, Azure "
                   "Stack), declare it as declared_azure_host in the manifest",
                   bare);
  }
  if (ll_streq(kind, "emulator")) {
    if (c == LL_HOST_LOOPBACK)
      return LL_OK;
    return ll_fail(err, LL_E_MANIFEST,
                   "endpoint_kind is emulator but account host %.200s is not "
                   "loopback (127.0.0.0/8, [::1], localhost)",
                   bare);
  }
  if (ll_streq(kind, "replay")) {
    if (c != LL_HOST_REPLAY)
      return ll_fail(err, LL_E_MANIFEST,
                     "endpoint_kind is replay but account host %.200s is not "
                     "the replay placeholder " LL_REPLAY_HOST,
                     bare);
    if (!ll_streq(label, "emulator") && !ll_streq(label, "azure") &&
        !ll_streq(label, "documented"))
      return ll_fail(err, LL_E_MANIFEST,
                     "endpoint_kind is replay but the fixture label is %.40s, "
                     "not emulator, azure or documented",
                     label ? label : "missing");
    return LL_OK;
  }
  return ll_fail(err, LL_E_MANIFEST,
                 "endpoint_kind %.40s is not azure, emulator or replay",
                 kind ? kind : "(missing)");
}
