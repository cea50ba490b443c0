'use strict';
// A real RocketMQ 4.x client (ali-ons, pure JavaScript) against mqlab.
//
//   node ali_ons_roundtrip.js send    <namesrv> <topic> <count> <tag>
//   node ali_ons_roundtrip.js consume <namesrv> <topic> <group> <expect> <deadlineMs> <idleMs>
//
// send: <count> synchronous sends (Producer.send awaits the broker's answer);
// prints one JSON line per send {key, status, msgId, broker, queueId,
// queueOffset} and exits 0 when all were SEND_OK.
// consume: a clustering push consumer of <group> subscribed to <topic> with
// '*', starting from the first offset when the group has none. Runs until it
// has <expect> distinct keys and then <idleMs> more (to see whether anything
// else arrives), or until <deadlineMs>; closes (which commits the offsets)
// and prints {received: [keys...], count}. Exit 0 either way: the caller judges.
//
// Pointing ali-ons at a plain NameServer: `nameSrv` (host:port; a list is an
// array, a 'a;b' string is not split) skips the Aliyun address server
// (`onsAddr`); without accessKey/secretKey nothing is signed. `httpclient` is
// asserted present even though it is only used for onsAddr, so a stub does.
const { Producer, Consumer, Message } = require('ali-ons');

const httpclient = { request: async () => { throw new Error('no HTTP address server with nameSrv'); } };

function options(namesrv, extra) {
  return Object.assign({ httpclient, nameSrv: namesrv, instanceName: `mqlab-${process.pid}` }, extra);
}

function quietLogger() {
  const lines = [];
  const log = (level) => (...args) => { lines.push(`${level} ${args.map(String).join(' ')}`); };
  return { lines, info: log('INFO'), warn: log('WARN'), error: log('ERROR'), debug: () => {} };
}

async function send(namesrv, topic, count, tag) {
  const logger = quietLogger();
  const producer = new Producer(options(namesrv, { producerGroup: 'MQLAB_COMPAT_PG', logger }));
  producer.on('error', err => logger.error(err.message));
  await producer.ready();
  let failed = 0;
  for (let i = 0; i < count; i++) {
    const key = `${tag}-${i}`;
    const msg = new Message(topic, 'TagA', `body of ${key}`);
    msg.keys = [ key ];
    try {
      const r = await producer.send(msg);
      if (r.sendStatus !== 'SEND_OK') failed++;
      console.log(JSON.stringify({ key, status: r.sendStatus, msgId: r.msgId, broker: r.messageQueue.brokerName,
        queueId: r.messageQueue.queueId, queueOffset: r.queueOffset }));
    } catch (err) {
      failed++;
      console.log(JSON.stringify({ key, status: 'ERROR', error: err.message }));
    }
  }
  await producer.close();
  if (failed) console.error(logger.lines.join('\n'));
  return failed ? 1 : 0;
}

async function consume(namesrv, topic, group, expect, deadlineMs, idleMs) {
  const logger = quietLogger();
  const consumer = new Consumer(options(namesrv, {
    consumerGroup: group,
    consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
    persistConsumerOffsetInterval: 1000,
    rebalanceInterval: 1000,
    logger,
  }));
  consumer.on('error', err => logger.error(err.message));
  const received = [];
  const seen = new Set();
  let enoughAt = expect === 0 ? Date.now() : null;
  consumer.subscribe(topic, '*', async msg => {
    const key = (Array.isArray(msg.keys) ? msg.keys[0] : msg.keys) || msg.msgId;
    received.push(key);
    seen.add(key);
    if (enoughAt === null && seen.size >= expect) enoughAt = Date.now();
  });
  await consumer.ready();
  const start = Date.now();
  while (Date.now() - start < deadlineMs && (enoughAt === null || Date.now() - enoughAt < idleMs)) {
    await new Promise(resolve => setTimeout(resolve, 100));
  }
  await consumer.close();
  // UPDATE_CONSUMER_OFFSET is written without waiting for an answer: give the
  // socket a moment to drain before the process exits.
  await new Promise(resolve => setTimeout(resolve, 500));
  console.log(JSON.stringify({ count: received.length, distinct: seen.size, received,
    errors: logger.lines.filter(l => l.startsWith('ERROR')).slice(0, 20) }));
  return 0;
}

async function main() {
  const [ mode, ...args ] = process.argv.slice(2);
  if (mode === 'send') return send(args[0], args[1], Number(args[2]), args[3]);
  if (mode === 'consume') {
    return consume(args[0], args[1], args[2], Number(args[3]), Number(args[4]), Number(args[5]));
  }
  console.error('usage: ali_ons_roundtrip.js send|consume ...');
  return 2;
}

main().then(code => process.exit(code), err => {
  console.error(err && err.stack || err);
  process.exit(1);
});
