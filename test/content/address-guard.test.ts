import { describe, expect, it } from 'vitest';
import { isBlockedAddress, isIpLiteral } from '../../src/content/fetch/address-guard.js';
import { hostPolicy } from '../../src/content/fetch/guarded-connector.js';

const BLOCKED = [
  // IPv4
  '0.0.0.0',
  '0.1.2.3',
  '10.0.0.1',
  '10.255.255.255',
  '100.64.0.1',
  '100.127.255.254',
  '127.0.0.1',
  '127.1.2.3',
  '169.254.169.254',
  '172.16.0.1',
  '172.31.255.255',
  '192.0.0.8',
  '192.0.2.1',
  '192.88.99.1',
  '192.168.0.1',
  '198.18.0.1',
  '198.19.255.255',
  '198.51.100.7',
  '203.0.113.9',
  '224.0.0.1',
  '239.255.255.250',
  '240.0.0.1',
  '255.255.255.255',
  // IPv6
  '::',
  '::1',
  '[::1]',
  'fe80::1',
  'fe80::1%eth0',
  'febf::1',
  'fc00::1',
  'fd12:3456:789a::1',
  'ff02::1',
  'ff05::1:3',
  'fec0::1',
  '100::1',
  '2001:db8::1',
  '2001::1',
  '2001:2::1',
  '3fff::1',
  '5f00::1',
  '4000::1',
  '::2',
  // IPv4 inside IPv6
  '::ffff:127.0.0.1',
  '::ffff:7f00:1',
  '::FFFF:7F00:0001',
  '::ffff:10.0.0.1',
  '::ffff:a00:1',
  '::ffff:169.254.169.254',
  '::ffff:0:127.0.0.1',
  '::127.0.0.1',
  '::7f00:1',
  '0:0:0:0:0:ffff:7f00:1',
  // NAT64 and 6to4
  '64:ff9b::7f00:1',
  '64:ff9b::8.8.8.8',
  '64:ff9b:1::1',
  '2002:7f00:1::1',
  '2002:c0a8:101::1',
  '2002:a00:1::',
  // not addresses at all
  'example.com',
  '',
  '1.2.3',
  '1.2.3.4.5',
  '::g',
];

const ALLOWED = [
  '1.1.1.1',
  '8.8.8.8',
  '93.184.216.34',
  '100.63.255.255',
  '100.128.0.1',
  '172.15.255.255',
  '172.32.0.1',
  '192.167.1.1',
  '192.169.0.1',
  '198.17.255.255',
  '198.20.0.1',
  '223.255.255.254',
  '2606:4700:4700::1111',
  '2001:4860:4860::8888',
  '2a00:1450:4001:82b::200e',
  '[2606:4700:4700::1111]',
  '::ffff:8.8.8.8',
  '::ffff:808:808',
  '2002:808:808::1',
];

describe('address guard', () => {
  it.each(BLOCKED)('refuses %s', (address) => {
    expect(isBlockedAddress(address)).toBe(true);
  });
  it.each(ALLOWED)('allows %s', (address) => {
    expect(isBlockedAddress(address)).toBe(false);
  });
  it('tells IP literals from names', () => {
    expect(isIpLiteral('127.0.0.1')).toBe(true);
    expect(isIpLiteral('[::1]')).toBe(true);
    expect(isIpLiteral('::ffff:7f00:1')).toBe(true);
    expect(isIpLiteral('localhost')).toBe(false);
    expect(isIpLiteral('2130706433')).toBe(false);
  });
  it('lets allow-listed names and addresses through, case- and bracket-insensitively', () => {
    const policy = hostPolicy(['Fixture.Test', '[::1]', '127.0.0.1']);
    expect(policy.allowedName('fixture.test')).toBe(true);
    expect(policy.allowedName('other.test')).toBe(false);
    expect(policy.allowedAddress('::1')).toBe(true);
    expect(policy.allowedAddress('127.0.0.1')).toBe(true);
    expect(policy.allowedAddress('127.0.0.2')).toBe(false);
    expect(policy.allowedAddress('8.8.8.8')).toBe(true);
  });
});
