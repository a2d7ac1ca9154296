/* SPDX-License-Identifier: Apache-2.0
 *
 * fl-mockcluster: librdkafka's mock Kafka cluster as a process of its own, so
 * that multi-process tests (agent process -> Kafka -> tainter process, kcat)
 * speak the real Kafka protocol. There is no installable broker on Debian;
 * this is the closest real thing (see README "Testing").
 *
 * Usage: fl-mockcluster [-b brokers] [-t topic:partitions[:rf]]... [-f bootstrap_file]
 * Prints "BOOTSTRAP=<servers>" on stdout (and writes it, atomically, to the
 * bootstrap file), then reads commands on stdin, one per line:
 *   down <broker_id|-1>              a broker (or all) stops answering
 *   up <broker_id|-1>                and comes back
 *   rtt <broker_id|-1> <ms>          adds latency
 *   err <apikey> <errcode> [count]   the next requests of that API fail
 *   leader <topic> <part> <broker>   moves a partition's leader
 *   topic <name> <parts> [rf]        creates a topic
 *   quit
 * Each command is answered "OK <cmd> <result>". Keeps running after stdin
 * EOF; exits on "quit", SIGTERM or SIGINT.
 */
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t running = 1;
static void on_signal(int sig) {
  (void)sig;
  running = 0;
}

static void create_topic(rd_kafka_mock_cluster_t* mc, const char* spec) {
  char name[256];
  int parts = 1, rf = 1;
  const char* colon = strchr(spec, ':');
  if (colon) {
    snprintf(name, sizeof(name), "%.*s", (int)(colon - spec), spec);
    sscanf(colon + 1, "%d:%d", &parts, &rf);
  } else {
    snprintf(name, sizeof(name), "%s", spec);
  }
  rd_kafka_resp_err_t err = rd_kafka_mock_topic_create(mc, name, parts, rf);
  fprintf(stderr, "fl-mockcluster: topic %s partitions=%d rf=%d: %s\n", name, parts, rf,
          rd_kafka_err2str(err));
}

static void write_bootstrap(const char* path, const char* servers) {
  char tmp[4096];
  snprintf(tmp, sizeof(tmp), "%s.tmp", path);
  FILE* f = fopen(tmp, "w");
  if (!f) return;
  fprintf(f, "%s\n", servers);
  fclose(f);
  rename(tmp, path); /* readers never see a half-written file */
}

static rd_kafka_resp_err_t run_command(rd_kafka_mock_cluster_t* mc, const char* cmd, int n,
                                       const char* a1, const char* a2, const char* a3, int* ok) {
  *ok = 1;
  if (!strcmp(cmd, "down")) return rd_kafka_mock_broker_set_down(mc, atoi(a1));
  if (!strcmp(cmd, "up")) return rd_kafka_mock_broker_set_up(mc, atoi(a1));
  if (!strcmp(cmd, "rtt")) return rd_kafka_mock_broker_set_rtt(mc, atoi(a1), atoi(a2));
  if (!strcmp(cmd, "leader")) return rd_kafka_mock_partition_set_leader(mc, a1, atoi(a2), atoi(a3));
  if (!strcmp(cmd, "topic")) return rd_kafka_mock_topic_create(mc, a1, atoi(a2), n >= 4 ? atoi(a3) : 1);
  if (!strcmp(cmd, "err")) {
    rd_kafka_resp_err_t errs[256];
    int count = n >= 4 ? atoi(a3) : 1;
    if (count > 256) count = 256;
    if (count < 1) count = 1;
    for (int i = 0; i < count; i++) errs[i] = (rd_kafka_resp_err_t)atoi(a2);
    rd_kafka_mock_push_request_errors_array(mc, (int16_t)atoi(a1), (size_t)count, errs);
    return RD_KAFKA_RESP_ERR_NO_ERROR;
  }
  *ok = 0;
  return RD_KAFKA_RESP_ERR_NO_ERROR;
}

int main(int argc, char** argv) {
  int brokers = 3, opt;
  const char* bootstrap_file = NULL;
  char* topics[64];
  int ntopics = 0;
  while ((opt = getopt(argc, argv, "b:t:f:")) != -1) {
    switch (opt) {
      case 'b': brokers = atoi(optarg); break;
      case 't': if (ntopics < 64) topics[ntopics++] = optarg; break;
      case 'f': bootstrap_file = optarg; break;
      default:
        fprintf(stderr, "usage: fl-mockcluster [-b brokers] [-t topic:parts[:rf]]... [-f file]\n");
        return 2;
    }
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_signal; /* no SA_RESTART, so a blocked read returns */
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);
  setvbuf(stdin, NULL, _IONBF, 0); /* poll() on fd 0 must see every pending line */

  char errstr[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "log_level", "3", errstr, sizeof(errstr));
  /* The handle only hosts the mock cluster's threads. */
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
  if (!rk) {
    fprintf(stderr, "fl-mockcluster: %s\n", errstr);
    return 1;
  }
  rd_kafka_mock_cluster_t* mc = rd_kafka_mock_cluster_new(rk, brokers);
  if (!mc) {
    fprintf(stderr, "fl-mockcluster: cannot create the mock cluster\n");
    return 1;
  }
  for (int i = 0; i < ntopics; i++) create_topic(mc, topics[i]);
  const char* servers = rd_kafka_mock_cluster_bootstraps(mc);
  printf("BOOTSTRAP=%s\n", servers);
  fflush(stdout);
  if (bootstrap_file) write_bootstrap(bootstrap_file, servers);

  char line[1024];
  int stdin_open = 1;
  while (running) {
    if (!stdin_open) {
      usleep(200000);
      continue;
    }
    struct pollfd pfd = {0, POLLIN, 0};
    /* Short timeout: signals may be delivered to librdkafka's threads. */
    if (poll(&pfd, 1, 200) <= 0) continue;
    if (!fgets(line, sizeof(line), stdin)) {
      if (feof(stdin)) stdin_open = 0;
      clearerr(stdin);
      continue;
    }
    char cmd[32] = "", a1[256] = "", a2[64] = "", a3[64] = "";
    int n = sscanf(line, "%31s %255s %63s %63s", cmd, a1, a2, a3);
    if (n < 1) continue;
    if (!strcmp(cmd, "quit")) break;
    int known;
    rd_kafka_resp_err_t err = run_command(mc, cmd, n, a1, a2, a3, &known);
    if (!known) printf("ERR unknown command %s\n", cmd);
    else printf("OK %s %s\n", cmd, rd_kafka_err2str(err));
    fflush(stdout);
  }
  rd_kafka_mock_cluster_destroy(mc);
  rd_kafka_destroy(rk);
  return 0;
}
