#include "broker/http/broker_console_page.h"

#include <string>

#include "broker/http/console_assets.h"

namespace mqlab::http {
namespace {

constexpr std::string_view kBrokerConsoleBody = R"HTML(
<header>
  <div class="title"><span id="dot" class="dot" title="state"></span><h1 id="name">mqlab broker</h1><span id="role" class="badge"></span></div>
  <div id="ident" class="ident">loading /api/status&hellip;</div>
  <div id="updated" class="updated"></div>
</header>
<div id="banner" class="banner hidden"></div>
<main>
  <section class="cards" id="cards"></section>
  <div class="grid2">
    <section><h2>Flush status</h2><div id="flush"></div></section>
    <section><h2>Replication</h2><div id="replication"></div></section>
  </div>
  <div class="grid2">
    <section><h2>Put latency <span class="aside">all puts since start, by bucket</span></h2><div id="put-hist"></div></section>
    <section><h2>CommitLog flush latency <span class="aside">all flushes since start, by bucket</span></h2><div id="flush-hist"></div></section>
  </div>
  <section><h2>Consumer groups <span class="aside">lag = queue max offset &minus; committed offset</span></h2><div id="groups"></div></section>
  <section><h2>Topics <label class="toggle"><input type="checkbox" id="system-topics">show system topics</label></h2><div id="topics"></div></section>
  <section><h2>Consumer lag by queue</h2><div id="lag"></div></section>
  <section><h2>Queues <span class="aside">ConsumeQueue offsets</span></h2><div id="queues"></div></section>
</main>
<footer>Raw data: <a href="/metrics">/metrics</a> (Prometheus) &middot; <a href="/api/status">/api/status</a> (JSON). This page refreshes itself.</footer>
)HTML";

constexpr std::string_view kBrokerConsoleScript = R"JS(
let previous = null;
let latest = null;
const kRowLimit = 300;

function isSystemTopic(name, broker) {
  return name === 'TBW102' || name === 'SCHEDULE_TOPIC_XXXX' || name === 'OFFSET_MOVED_EVENT' ||
         name === 'SELF_TEST_TOPIC' || name.startsWith('RMQ_SYS_') || name.startsWith('%RETRY%') ||
         name.startsWith('%DLQ%') || name === broker.cluster_name || name === broker.broker_name;
}
function permText(perm) { return (perm & 4 ? 'R' : '-') + (perm & 2 ? 'W' : '-') + (perm & 1 ? 'X' : '-'); }

// Latency of the puts (or flushes) between two fetches: bucket counts subtract.
function intervalLatency(now, before) {
  const counts = now.counts.map((c, i) => c - (before ? before.counts[i] : 0));
  const count = now.count - (before ? before.count : 0);
  const sum = now.sum_ms - (before ? before.sum_ms : 0);
  return {counts, count, sum_ms: sum, bounds_ms: now.bounds_ms};
}
// The bucket bound at or above the q-quantile (what a histogram can say).
function quantileMs(latency, q) {
  if (latency.count <= 0) return null;
  const rank = Math.ceil(q * latency.count);
  let seen = 0;
  for (let i = 0; i < latency.counts.length; i++) {
    seen += latency.counts[i];
    if (seen >= rank) return i < latency.bounds_ms.length ? latency.bounds_ms[i] : Infinity;
  }
  return Infinity;
}
// The last interval's latency; the whole run's when the interval had none.
function latencyText(now, before) {
  let latency = intervalLatency(now, before), when = 'last 2 s';
  if (latency.count <= 0) latency = intervalLatency(now, null), when = 'since start';
  if (latency.count <= 0) return {value: '\u2013', sub: 'no samples yet'};
  const p99 = quantileMs(latency, 0.99);
  return {value: fmtMs(latency.sum_ms / latency.count),
          sub: 'avg ' + when + '; p50 \u2264 ' + fmtMs(quantileMs(latency, 0.5)) + ', p99 \u2264 ' + (isFinite(p99) ? fmtMs(p99) : '> 10 s')};
}

function renderHeader(s) {
  const b = s.broker;
  document.title = b.broker_name + ' \u00b7 mqlab broker';
  show('name', b.broker_name);
  const role = document.getElementById('role');
  role.textContent = b.broker_role + (b.broker_id ? ' #' + b.broker_id : '');
  role.className = 'badge ' + (b.broker_role === 'SLAVE' ? 'slave' : b.broker_role === 'SYNC_MASTER' ? 'sync' : 'master');
  const dot = document.getElementById('dot');
  dot.className = 'dot ' + (!b.running ? 'bad' : b.writable ? 'ok' : 'warn');
  dot.title = !b.running ? 'not running' : b.writable ? 'running, writable' : 'running, NOT writable';
  const item = (label, value) => [label + ' ', el('b', null, value), '  \u00b7  '];
  show('ident', ...item('cluster', b.cluster_name), ...item('addr', b.broker_addr), ...item('HA', b.ha_server_addr),
       ...item('flush', b.flush_disk_type), ...item('up', fmtDuration(b.now_ms - b.boot_timestamp_ms)),
       'v' + b.version);
}

function renderCards(s) {
  const c = s.counters, p = previous;
  const seconds = p ? (s.broker.now_ms - p.broker.now_ms) / 1000 : 0;
  const rate = (now, before) => (p && seconds > 0) ? Math.max(0, now - before) / seconds : null;
  const putLatency = latencyText(s.put_latency, p && p.put_latency);
  const flushLatency = latencyText(s.flush_latency, p && p.flush_latency);
  const totalLag = s.consumer_groups.reduce((sum, g) => sum + g.total_lag, 0);
  const replicated = rate(c.replica_bytes_appended, p && p.counters.replica_bytes_appended);
  show('cards',
       s.broker.broker_role === 'SLAVE'
           ? card('Replicated', replicated === null ? '\u2013' : fmtBytes(replicated) + '/s', fmtBytes(c.replica_bytes_appended) + ' from the master since start')
           : card('Put TPS', fmtRate(rate(c.msg_put_total, p && p.counters.msg_put_total)), fmtInt(c.msg_put_total) + ' stored since start'),
       card('Failed puts', fmtInt(c.msg_put_failed), p ? fmtRate(rate(c.msg_put_failed, p.counters.msg_put_failed)) + ' /s now' : 'since start'),
       card('Put latency', putLatency.value, putLatency.sub),
       card('Get TPS', fmtRate(rate(c.msg_get_total, p && p.counters.msg_get_total)), fmtInt(c.msg_get_total) + ' delivered since start'),
       card('Dirty bytes', fmtBytes(s.commit_log.dirty_bytes), 'written, not yet flushed'),
       card('Flush latency', flushLatency.value, flushLatency.sub),
       card('CommitLog', fmtBytes(s.commit_log.max_offset - s.commit_log.min_offset), s.commit_log.segments + ' segment file(s)'),
       card('Consumer lag', fmtInt(totalLag), s.consumer_groups.length + ' group(s)'));
}

function renderFlush(s) {
  const log = s.commit_log, c = s.counters;
  const span = Math.max(1, log.max_offset - log.min_offset);
  const flushedShare = log.max_offset === log.min_offset ? 100 : 100 * (log.flushed_offset - log.min_offset) / span;
  const behind = log.max_offset - log.dispatched_offset;
  show('flush',
       el('div', {class: 'bar', title: 'flushed share of the CommitLog on disk'}, el('div', {style: 'width:' + Math.max(0, Math.min(100, flushedShare)).toFixed(2) + '%'})),
       el('dl', {class: 'kv'},
          el('dt', null, 'flush type'), el('dd', null, s.broker.flush_disk_type),
          el('dt', null, 'state'), el('dd', null, log.dirty_bytes === 0 ? pill('all flushed', 'ok') : pill(fmtBytes(log.dirty_bytes) + ' not flushed', log.dirty_bytes > 64 * 1024 * 1024 ? 'warn' : '')),
          el('dt', null, 'min offset'), el('dd', null, fmtInt(log.min_offset)),
          el('dt', null, 'flushed offset'), el('dd', null, fmtInt(log.flushed_offset)),
          el('dt', null, 'max offset'), el('dd', null, fmtInt(log.max_offset)),
          el('dt', null, 'dispatched to'), el('dd', null, fmtInt(log.dispatched_offset), behind > 0 ? ' (' + fmtBytes(behind) + ' behind)' : ''),
          el('dt', null, 'flushes'), el('dd', null, fmtInt(c.commit_log_flushes)),
          el('dt', null, 'flush timeouts'), el('dd', null, c.flush_timeouts ? pill(fmtInt(c.flush_timeouts), 'bad') : '0'),
          el('dt', null, 'writable'), el('dd', null, s.broker.writable ? pill('yes', 'ok') : pill('no: disk full or a flush failed', 'bad'))));
}

function renderReplication(s) {
  const r = s.replication, b = s.broker;
  if (r.master) {
    const m = r.master;
    const kind = m.state === 'TRANSFER' ? 'ok' : m.state === 'REFUSED' ? 'bad' : 'warn';
    show('replication', el('dl', {class: 'kv'},
         el('dt', null, 'role'), el('dd', null, 'SLAVE of ', m.master_address || '(master not known yet)'),
         el('dt', null, 'link'), el('dd', null, pill(m.state, kind)),
         el('dt', null, 'confirmed offset'), el('dd', null, fmtInt(m.confirmed_offset)),
         el('dt', null, 'local max offset'), el('dd', null, fmtInt(s.commit_log.max_offset)),
         el('dt', null, 'received'), el('dd', null, fmtBytes(s.counters.replica_bytes_appended)),
         m.refusal_reason ? [el('dt', null, 'refused'), el('dd', null, pill(m.refusal_reason, 'bad'))] : null));
    return;
  }
  const rows = r.slaves.map(sl => [sl.remote_address, sl.transferring ? pill('transferring', 'ok') : pill('handshake', 'warn'),
                                   sl.ack_offset < 0 ? '\u2013' : fmtInt(sl.ack_offset), fmtBytes(sl.lag_bytes)]);
  const nodes = [table([{label: 'slave'}, {label: 'state'}, {label: 'acked offset', num: true}, {label: 'lag', num: true}], rows,
                       'No slave connected.')];
  if (b.broker_role === 'SYNC_MASTER' && r.slaves.length === 0) {
    nodes.push(el('div', {class: 'note'}, pill('SYNC_MASTER without a slave', 'bad'), ' puts are answered SLAVE_NOT_AVAILABLE.'));
  }
  nodes.push(el('dl', {class: 'kv', style: 'margin-top:8px'},
                el('dt', null, 'highest slave ack'), el('dd', null, fmtInt(r.push2slave_max_offset)),
                el('dt', null, 'slave timeouts'), el('dd', null, fmtInt(s.counters.slave_timeouts)),
                el('dt', null, 'slave not available'), el('dd', null, fmtInt(s.counters.slave_not_available))));
  show('replication', ...nodes);
}

function histogram(id, latency) {
  const max = Math.max(1, ...latency.counts);
  const short = ms => ms < 1 ? Math.round(ms * 1000) + '\u00b5s' : ms < 1000 ? ms + 'ms' : ms / 1000 + 's';
  const label = i => i < latency.bounds_ms.length ? short(latency.bounds_ms[i]) : '>10s';
  const bars = latency.counts.map((count, i) => el('div', {style: 'height:' + (100 * count / max).toFixed(1) + '%', title: '\u2264 ' + label(i) + ': ' + fmtInt(count)}));
  // Decades only (10us, 100us, 1ms, ...): every third bound of the 1-2.5-5 series.
  const axis = latency.counts.map((count, i) => el('div', null, i % 3 === 0 ? label(i) : ''));
  const average = latency.count ? fmtMs(latency.sum_ms / latency.count) : '\u2013';
  show(id, el('div', {class: 'hist'}, bars), el('div', {class: 'hist-axis'}, axis),
       el('div', {class: 'note'}, fmtInt(latency.count) + ' samples, average ' + average + '; hover a bar for its count.'));
}

function renderTables(s) {
  const showSystem = document.getElementById('system-topics').checked;
  const topics = s.topics.filter(t => showSystem || !isSystemTopic(t.name, s.broker));
  const hidden = s.topics.length - topics.length;
  const topicNode = table([{label: 'topic'}, {label: 'read queues', num: true}, {label: 'write queues', num: true}, {label: 'perm'}, {label: 'messages stored', num: true}],
                          topics.map(t => [t.name, t.read_queue_nums, t.write_queue_nums, permText(t.perm), fmtInt(t.messages)]),
                          'No topics yet.', kRowLimit);
  show('topics', topicNode, hidden ? el('div', {class: 'note'}, hidden + ' system topic(s) hidden') : null);

  const maxLag = Math.max(1, ...s.consumer_groups.map(g => g.total_lag));
  show('groups', table([{label: 'group'}, {label: 'online consumers', num: true}, {label: 'lag (messages)', num: true}],
       s.consumer_groups.map(g => [g.group, g.online_clients ? pill(String(g.online_clients), 'ok') : pill('0', 'warn'),
                                   el('span', null, fmtInt(g.total_lag), el('span', {class: 'lagbar', style: 'width:' + (60 * g.total_lag / maxLag).toFixed(0) + 'px'}))]),
       'No consumer group has connected or committed offsets.', kRowLimit));

  show('lag', table([{label: 'group'}, {label: 'topic'}, {label: 'queue', num: true}, {label: 'broker offset', num: true}, {label: 'consumer offset', num: true}, {label: 'lag', num: true}],
       s.consumer_queues.map(q => [q.group, q.topic, q.queue_id, fmtInt(q.broker_offset), fmtInt(q.consumer_offset), q.lag > 0 ? el('b', null, fmtInt(q.lag)) : '0']),
       'No committed consumer offsets.', kRowLimit));

  const queues = s.queues.filter(q => showSystem || !isSystemTopic(q.topic, s.broker));
  show('queues', table([{label: 'topic'}, {label: 'queue', num: true}, {label: 'min offset', num: true}, {label: 'max offset', num: true}, {label: 'messages', num: true}],
       queues.map(q => [q.topic, q.queue_id, fmtInt(q.min_offset), fmtInt(q.max_offset), fmtInt(q.max_offset - q.min_offset)]),
       'No ConsumeQueue yet: nothing was stored.', kRowLimit));
}

function render(s) {
  latest = s;
  renderHeader(s);
  renderCards(s);
  renderFlush(s);
  renderReplication(s);
  histogram('put-hist', s.put_latency);
  histogram('flush-hist', s.flush_latency);
  renderTables(s);
  previous = s;
}
document.getElementById('system-topics').addEventListener('change', () => { if (latest) renderTables(latest); });
refreshLoop('/api/status', 2000, render);
)JS";

}  // namespace

std::string_view broker_console_html() {
  static const std::string page = console_document("mqlab broker", kBrokerConsoleBody, kBrokerConsoleScript);
  return page;
}

}  // namespace mqlab::http
