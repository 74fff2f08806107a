$ORIGIN example.com.
$TTL 3600
example.com. 3600 IN SOA ns1.example.com. hostmaster.example.com. 1 300 60 1209600 60 ; content sha256:e231a179c98452ed1107f6cc281086c969ff8d969c900a7decbb8dc31ca2acf7
example.com. 3600 IN A 198.51.100.10
example.com. 3600 IN NS ns1.example.com.
example.com. 3600 IN NS ns2.example.com.
example.com. 3600 IN MX 10 mail.example.com.
example.com. 3600 IN TXT "v=spf1 mx -all"
example.com. 3600 IN AAAA 2001:db8::10
example.com. 3600 IN CAA 0 issue "letsencrypt.org"
_sip._tcp.example.com. 3600 IN SRV 10 60 5060 sip.example.com.
blog.example.com. 3600 IN A 198.51.100.30
mail.example.com. 300 IN A 198.51.100.25
ns1.example.com. 3600 IN A 198.51.100.53
ns2.example.com. 3600 IN A 198.51.100.54
sip.example.com. 3600 IN A 198.51.100.60
www.example.com. 3600 IN CNAME example.com.
