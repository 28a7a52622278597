import { expect } from 'chai';
import { brokerNodes, brokerUrls } from '../src/bus/amqp/broker-nodes.js';

describe('broker nodes (AMQP_URL naming one broker or a cluster)', () => {
  it('reads each node as amqplib would read its URL: credentials decoded, vhost, tuning, default port', () => {
    const nodes = brokerNodes(
      'amqp://ledger%40svc:p%2Fss@rabbit-1:5673/payments?heartbeat=15&frameMax=65536,amqps://rabbit-2',
    );
    expect(nodes.count).to.equal(2);
    expect({ ...nodes.target }).to.deep.equal({
      protocol: 'amqp',
      hostname: 'rabbit-1',
      port: 5673,
      username: 'ledger@svc',
      password: 'p/ss',
      vhost: 'payments',
      heartbeat: 15,
      frameMax: 65536,
    });
    nodes.next();
    // The next node's own fields only: nothing of the first is left behind (its vhost, its heartbeat).
    expect({ ...nodes.target }).to.deep.equal({
      protocol: 'amqps',
      hostname: 'rabbit-2',
      port: 5671,
      username: 'guest',
      password: 'guest',
      vhost: undefined,
    });
    expect(nodes.current()).to.equal('rabbit-2:5671');
    nodes.next();
    expect(nodes.current()).to.equal('rabbit-1:5673');
  });

  it('keeps one node where one is named, and refuses what is not a broker URL', () => {
    const single = brokerNodes('amqp://guest:guest@127.0.0.1:5672');
    single.next();
    expect(single.current()).to.equal('127.0.0.1:5672');
    expect(brokerUrls(' amqp://a , amqp://b ')).to.deep.equal(['amqp://a', 'amqp://b']);
    expect(() => brokerNodes('http://rabbit:15672')).to.throw(/amqp:\/\/ or amqps:\/\//);
    expect(() => brokerNodes(' , ')).to.throw(/names no broker/);
  });
});
