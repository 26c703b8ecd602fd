import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { InformerStore, type Entry } from '../../src/k8s/informerStore.js';

interface Widget {
  metadata: { name: string; namespace?: string; resourceVersion?: string };
  owner?: string;
}

const raw = (name: string, rv: string, owner?: string): Widget => ({
  metadata: { name, namespace: 'ns', resourceVersion: rv },
  ...(owner ? { owner } : {}),
});

function snapshot(store: InformerStore<Widget>, ...objs: Widget[]): Map<string, Entry<Widget>> {
  return new Map(objs.map((o) => [store.prepare(o).key, store.prepare(o).entry]));
}

describe('InformerStore', () => {
  it('replace returns deletes first, then adds and updates; an unchanged resourceVersion is no event', () => {
    const store = new InformerStore<Widget>('widgets', undefined);
    store.replace(snapshot(store, raw('a', '1'), raw('b', '1'), raw('c', '1')));
    const diff = store.replace(snapshot(store, raw('b', '1'), raw('c', '2'), raw('d', '1')));
    assert.deepEqual(
      diff.map((e) => `${e.type} ${e.obj.metadata.name}`),
      ['delete a', 'update c', 'add d'],
    );
    assert.equal(store.size, 3);
    assert.equal(store.get('ns', 'a'), undefined);
  });

  it('apply keeps indexes current and freezes what it caches', () => {
    const store = new InformerStore<Widget>('widgets', undefined);
    store.addIndex('owner', (w) => (w.owner ? [w.owner] : []));
    assert.throws(() => store.addIndex('owner', () => []), /already exists/);
    assert.equal(store.apply('ADDED', raw('a', '1', 'x')).event.type, 'add');
    const { event, rv } = store.apply('MODIFIED', raw('a', '2', 'y'));
    assert.equal(event.type, 'update');
    assert.equal(rv, '2');
    assert.deepEqual(store.byIndex('owner', 'x'), []);
    assert.deepEqual(
      store.byIndex('owner', 'y').map((w) => w.metadata.name),
      ['a'],
    );
    assert.ok(Object.isFrozen(store.get('ns', 'a')!.metadata));
    assert.equal(store.apply('DELETED', raw('a', '3', 'y')).event.type, 'delete');
    assert.deepEqual(store.byIndex('owner', 'y'), []);
    assert.throws(() => store.byIndex('nope', 'x'), /no index nope/);
  });

  it('takes key and version from the raw object, whatever slim keeps', () => {
    const store = new InformerStore<Widget>('widgets', () => ({ metadata: { name: 'slimmed' } }));
    const { key, entry } = store.prepare(raw('a', '7'));
    assert.equal(key, 'ns/a');
    assert.equal(entry.rv, '7');
    assert.throws(() => store.prepare({ metadata: {} }), /object without metadata.name/);
  });
});
