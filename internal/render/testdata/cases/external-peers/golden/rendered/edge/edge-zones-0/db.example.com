$ORIGIN example.com.
$TTL 300
example.com. 300 IN SOA ns1.example.com. dns-admin.example.com. 1 600 120 604800 30 ; content sha256:80ae3f9bd33a772d0123605bd865c1b2d1004965c333e548af3959f88d6e0f15
example.com. 300 IN NS ns.partner.example.
example.com. 300 IN NS ns1.example.com.
ns1.example.com. 300 IN A 192.0.2.53
ns1.example.com. 300 IN AAAA 2001:db8::53
www.example.com. 300 IN AAAA 2001:db8::80
