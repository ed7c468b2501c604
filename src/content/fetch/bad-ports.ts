/**
 * The ports browsers refuse to fetch from (the Fetch standard's "bad port" list): mail, shell,
 * name, file and chat services that read an HTTP request as commands of their own. A page anyone
 * may submit, or a redirect it answers with, would otherwise make Salon send an HTTP request with
 * attacker-chosen path and headers to an SMTP or IRC server of a third party.
 */
const BAD_PORTS = new Set([
  0, 1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110, 111, 113, 115, 117, 119, 123, 135, 137,
  139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049,
  3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

/** The port `url` names when browsers would refuse it, or null (a URL without a port uses its scheme's, 80 or 443). */
export function badPortOf(url: URL): number | null {
  if (url.port === '') return null;
  const port = Number(url.port);
  return BAD_PORTS.has(port) ? port : null;
}
