$ORIGIN example.com.
$TTL 3600
@	IN SOA ns1.example.com. hostmaster.example.com. 2024010101 7200 900 1209600 300
	IN NS	ns1.example.com.
	IN NS	ns2.example.com.
	IN A	198.51.100.10
	IN AAAA	2001:db8::10
	IN MX	10 mail
	IN TXT	"v=spf1 mx -all"
	IN CAA	0 issue "letsencrypt.org"
ns1	IN A	198.51.100.53
ns2	IN A	198.51.100.54
www	IN CNAME @
mail 300 IN A 198.51.100.25
_sip._tcp IN SRV 10 60 5060 sip
sip	IN A	198.51.100.60
*.apps	IN A	198.51.100.70
long	IN TXT	"first string" "second string with \"quotes\""
