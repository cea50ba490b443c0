#include "broker/http/namesrv_console_page.h"

#include <string>

#include "broker/http/console_assets.h"

namespace mqlab::http {
namespace {

constexpr std::string_view kNamesrvConsoleBody = R"HTML(
<header>
  <div class="title"><span id="dot" class="dot"></span><h1>mqlab NameServer</h1></div>
  <div id="ident" class="ident">loading /api/cluster&hellip;</div>
  <div id="updated" class="updated"></div>
</header>
<div id="banner" class="banner hidden"></div>
<main>
  <section class="cards" id="cards"></section>
  <section><h2>Brokers <span class="aside">a broker's page is on its listenPort + 2 (broker.conf httpPort)</span></h2><div id="brokers"></div></section>
  <section><h2>Topics <label class="toggle"><input type="checkbox" id="system-topics">show system topics</label></h2><div id="topics"></div></section>
</main>
<footer>Raw data: <a href="/metrics">/metrics</a> (Prometheus) &middot; <a href="/api/cluster">/api/cluster</a> (JSON). This page refreshes itself.</footer>
)HTML";

constexpr std::string_view kNamesrvConsoleScript = R"JS(
let latest = null;
const kRowLimit = 500;

function isSystemTopic(name, data) {
  const names = new Set(data.brokers.map(b => b.broker_name).concat(data.clusters.map(c => c.name)));
  return name === 'TBW102' || name === 'SCHEDULE_TOPIC_XXXX' || name === 'OFFSET_MOVED_EVENT' ||
         name === 'SELF_TEST_TOPIC' || name.startsWith('RMQ_SYS_') || name.startsWith('%RETRY%') ||
         name.startsWith('%DLQ%') || names.has(name);
}
function permText(perm) { return (perm & 4 ? 'R' : '-') + (perm & 2 ? 'W' : '-') + (perm & 1 ? 'X' : '-'); }

function renderTopics(data) {
  const showSystem = document.getElementById('system-topics').checked;
  const topics = data.topics.filter(t => showSystem || !isSystemTopic(t.topic, data));
  const hidden = data.topics.length - topics.length;
  const rows = topics.map(t => [
    t.topic,
    el('span', null, t.queue_datas.map(q => el('span', {class: 'pill', style: 'margin-right:4px'},
        q.broker_name + ' r' + q.read_queue_nums + '/w' + q.write_queue_nums + ' ' + permText(q.perm)))),
    t.queue_datas.reduce((sum, q) => sum + q.write_queue_nums, 0)]);
  show('topics', table([{label: 'topic'}, {label: 'brokers (read/write queues, perm)'}, {label: 'write queues', num: true}], rows,
                       'No topic is routed yet.', kRowLimit),
       hidden ? el('div', {class: 'note'}, hidden + ' system topic(s) hidden') : null);
}

function render(data) {
  latest = data;
  const n = data.namesrv;
  document.getElementById('dot').className = 'dot ' + (n.running ? 'ok' : 'bad');
  const item = (label, value) => [label + ' ', el('b', null, value), '  \u00b7  '];
  show('ident', ...item('listening on', n.address), ...item('connections', fmtInt(n.connections)),
       'registrations ' + fmtInt(n.registrations));
  const masters = data.brokers.filter(b => b.role === 'MASTER').length;
  show('cards',
       card('Clusters', data.clusters.length, data.clusters.map(c => c.name).join(', ') || 'none registered'),
       card('Broker groups', new Set(data.brokers.map(b => b.broker_name)).size, masters + ' master(s), ' + (data.brokers.length - masters) + ' slave(s)'),
       card('Topics', data.topics.length, 'with a route'),
       card('Expired brokers', fmtInt(n.brokers_expired), fmtInt(n.brokers_dropped_on_close) + ' dropped on connection close'));
  const rows = data.brokers.map(b => [
    b.cluster, el('b', null, b.broker_name), b.broker_id,
    pill(b.role, b.role === 'MASTER' ? 'ok' : ''),
    b.broker_addr, b.ha_server_addr || '\u2013',
    pill(fmtDuration(b.last_update_ms_ago) + ' ago', b.last_update_ms_ago > 60000 ? 'warn' : 'ok'),
    b.console_url ? el('a', {href: b.console_url, target: '_blank', rel: 'noopener'}, 'open console \u2197') : '\u2013']);
  show('brokers', table([{label: 'cluster'}, {label: 'broker'}, {label: 'id', num: true}, {label: 'role'}, {label: 'address'},
                         {label: 'HA address'}, {label: 'last heartbeat'}, {label: 'console'}], rows,
                        'No broker registered. Start one with mqbroker -n ' + location.hostname + ':' + (n.address.split(':').pop() || '9876') + '.', kRowLimit));
  renderTopics(data);
}
document.getElementById('system-topics').addEventListener('change', () => { if (latest) renderTopics(latest); });
refreshLoop('/api/cluster', 2000, render);
)JS";

}  // namespace

std::string_view namesrv_console_html() {
  static const std::string page = console_document("mqlab NameServer", kNamesrvConsoleBody, kNamesrvConsoleScript);
  return page;
}

}  // namespace mqlab::http
